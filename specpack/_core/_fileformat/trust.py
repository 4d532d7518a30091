"""Who may say what a pack file runs: allow-lists and the payload refusal.

Two checks, both made before anything is imported or unpickled:

- **References** must name modules inside ``allow`` (or be an exact ``module:qualname``
  entry of it) when an allow-list is given: every ``$ref`` and ``$enum`` (entry point, kwargs,
  spec, layers, found by :func:`specpack._core._typedjson.walk.references`) and the spec's
  entry-point *strings* (``entry_point``, ``vector_entry_point``, each
  ``additional_wrappers`` entry point). The resolved objects are checked again at ``make()``
  (:mod:`specpack._core._carry.allowlist`): a module entry admits the env and wrapper classes
  *defined* in an allowed module and values, not functions or other callables, which need
  their exact entry. (The recorded ``surface`` holds no references at all:
  :mod:`.manifest` refuses them.)
- **Payloads** (``$code``, ``$object``: cloudpickle, which runs code when unpickled) are
  refused unless the caller trusts the file (``trust=True``) or it verifies with a key.

Both walk the manifest once, in linear time, and build a place's text only to report it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .._carry.allowlist import valid_entry
from .._errors import UntrustedPackError
from .._text import printable
from .._typedjson.decode import Decoder
from .._typedjson.tags import dotted_name
from .._typedjson.walk import Found, Path
from .._typedjson.walk import payload_uses as _uses
from .._typedjson.walk import references as _references
from .schema import is_make_wrapper, spec_entry_points

__all__ = ["check_allowed", "manifest_references", "named_modules", "normalize_allow",
           "payload_uses", "refuse_payloads"]

#: Refusals listed in one error (the rest are counted).
_SHOWN = 10


def manifest_references(data: dict[str, Any], source: str = "<manifest>"
                        ) -> Iterator[tuple[Found, bool]]:
    """``(found, is_layer_class)`` for every code reference of a parsed manifest.

    The ``$ref``/``$enum`` nodes of the entry point, kwargs, spec and layers, then the spec's
    entry-point strings (``found.tag == "string"``; the spec is decoded for them, which
    imports and unpickles nothing). Raises :class:`~specpack.PackFormatError` when the
    spec does not decode.
    """
    yield from ((f, False) for f in _references(data.get("entry_point"), "entry_point"))
    yield from ((f, False) for f in _references(data.get("kwargs"), "kwargs"))
    spec = data.get("spec")
    yield from ((f, False) for f in _references(spec, "spec"))
    layers = data.get("layers")
    for i, layer in enumerate(layers if type(layers) is list else ()):
        if type(layer) is not dict:
            continue
        at: Path = ("layers", i)
        cls = layer.get("class")
        here: Path = (at, "class")
        yield from ((f, f.tag == "$ref" and f.at == here) for f in _references(cls, here))
        yield from ((f, False) for f in _references(layer.get("kwargs"), (at, "kwargs")))
    if type(spec) is dict:
        table = data.get("payloads")
        decoded = Decoder(table if type(table) is dict else {}, source).value(spec, "spec")
        if type(decoded) is dict:
            for place, text in spec_entry_points(decoded):
                yield Found(place, "string", text), False


def named_modules(data: dict[str, Any], source: str = "<manifest>"
                  ) -> list[tuple[str, str, str]]:
    """``(where, module, qualname)`` for every code reference in a parsed manifest.

    Places are raw text (bounded; a JSON writer escapes them). Order: entry point, kwargs,
    spec, layers, then the spec's entry-point strings.
    """
    return [(f.where, f.module, f.qualname) for f, _ in manifest_references(data, source)]


def normalize_allow(allow: Iterable[str] | str | None) -> tuple[str, ...] | None:
    """``allow`` as a tuple of entries (``None`` stays None: no allow-list).

    An entry is a module name (``"my_pkg"``: its env and wrapper classes and values) or an
    exact reference (``"my_pkg.envs:make_env"``: that one function or other callable); see
    :mod:`specpack._core._carry.allowlist`.
    """
    if allow is None:
        return None
    try:
        prefixes = (allow,) if isinstance(allow, str) else tuple(allow)
    except TypeError:
        raise UntrustedPackError(f"allow={allow!r} must be a list of module names, such as "
                                 "['my_pkg'], or exact references such as "
                                 "['my_pkg.envs:make_env']") from None
    for p in prefixes:
        if type(p) is not str or not valid_entry(p):
            raise UntrustedPackError(
                f"{p!r} is not an allow entry: each entry must be a module name such as "
                "'my_pkg' or an exact reference such as 'my_pkg.envs:make_env'",
                python=f"(in allow={list(prefixes)!r})", cli=f"(in --allow {printable(str(p))})")
    return prefixes


class _Policy:
    """``allow`` as module names (a set and a prefix tuple) and exact references; each module
    name is decided once."""

    def __init__(self, prefixes: tuple[str, ...]) -> None:
        modules = [p for p in prefixes if ":" not in p]
        self.exact = frozenset(modules)
        self.inside = tuple(p + "." for p in modules)
        self.named = frozenset(p for p in prefixes if ":" in p)
        self.seen: dict[str, bool] = {}

    def admits(self, module: str, body: str) -> bool:
        """Whether the reference ``body`` (``module:qualname``) may be resolved at all."""
        ok = self.seen.get(module)
        if ok is None:
            ok = module in self.exact or module.startswith(self.inside)
            self.seen[module] = ok
        return ok or body in self.named


def _problem(found: Found) -> str | None:
    """Why a reference cannot be checked against ``allow`` at all (None: it can).

    A spec's entry-point string is read by gymnasium (and gym) as ``module:attribute``, one
    attribute, so a dotted one is refused too.
    """
    mod, sep, qual = found.body.partition(":")
    if found.tag == "$ref" and found.member is not None:  # a registry reference: the module
        return None if sep and dotted_name(mod) else "not of the form 'module:name'"
    if not sep or not dotted_name(mod) or not dotted_name(qual):
        return "not of the form 'module:qualname'"
    if any(p.startswith("__") and p.endswith("__") for p in qual.split(".")):
        return "a dunder attribute is not part of a name"
    if found.tag == "string" and "." in qual:
        return "an entry-point string names one attribute of its module"
    return None


def check_allowed(data: dict[str, Any], prefixes: tuple[str, ...], source: str) -> None:
    """Refuse (before any import) a manifest naming code outside ``prefixes``.

    A module is allowed when it equals a module entry or lies inside one (``"my_pkg"``
    admits ``my_pkg.envs``); a reference is also allowed when its ``module:qualname`` is an
    exact entry. What a reference resolves to is checked when it is resolved, at ``make()``
    (:mod:`specpack._core._carry.allowlist`: a module admits env and wrapper classes and values, a
    function needs its exact entry). The wrappers ``make()`` itself adds (``PassiveEnvChecker``,
    ``OrderEnforcing``, ``TimeLimit``, from the backend's ``wrappers`` package) are always
    admitted as layer classes. A reference that is not a well-formed ``module:qualname``, or
    steps through a dunder attribute, is refused too. Stops at the eleventh refusal.

    Raises
    ------
    UntrustedPackError
        Listing up to ten refused references (place and name) and the modules to add.
    PackFormatError
        The spec does not decode.
    """
    policy = _Policy(prefixes)
    backend = data.get("backend")
    refused: list[str] = []
    tops: set[str] = set()
    example = ""
    for found, layer_class in manifest_references(data, source):
        mod = found.module
        why = _problem(found)
        if why is None and (policy.admits(mod, found.body) or (
                layer_class and is_make_wrapper(backend, mod, found.qualname))):
            continue
        name = printable(found.body, 200)
        refused.append(f"{found.path()} = {name}" + (f" ({why})" if why else ""))
        if why is None:
            tops.add(printable(mod.partition(".")[0], 60))
            example = example or printable(found.body, 200)
        if len(refused) > _SHOWN:
            break
    if refused:
        names = sorted(tops)
        why = ("if you trust that code (a module entry admits the env and wrapper classes and "
               "values defined there; a function or other callable needs its exact "
               f"'module:qualname' entry, such as {example!r})")
        raise UntrustedPackError(
            f"{source}: names code outside allow list {list(prefixes)}: "
            + "; ".join(refused[:_SHOWN]) + (" (and more)" if len(refused) > _SHOWN else "")
            + ". Nothing was imported.",
            python=f"Add {', '.join(map(repr, names))} to allow= {why}" if names else None,
            cli=f"Add {' '.join('--allow ' + n for n in names)} {why}" if names else None,
        )


def payload_uses(data: dict[str, Any]) -> dict[str, list[str]]:
    """digest -> the manifest places that use it (raw, bounded text; linear walk)."""
    uses: dict[str, list[str]] = {}
    layers = data.get("layers")
    sections: list[tuple[Any, Path]] = [
        (data.get("entry_point"), "entry_point"), (data.get("kwargs"), "kwargs"),
        (data.get("spec"), "spec"), (layers, "layers")]
    for node, root in sections:
        for digest, found in _uses(node, root).items():
            uses.setdefault(digest, []).extend(f.where for f in found)
    return uses


def _payload_lines(data: dict[str, Any]) -> list[str]:
    uses = payload_uses(data)
    lines = []
    for entry in _payloads(data):
        digest = entry["digest"]
        places = uses.get(digest, [])
        at = ", ".join(places[:5]) or "not referenced"
        if len(places) > 5:
            at += f" and {len(places) - 5} more places"
        python = entry.get("python") or "unknown"
        lines.append(printable(
            f"  - {entry.get('kind')} {entry.get('name')} at {at}: {entry.get('size')} bytes, "
            f"{digest}, cloudpickle for Python {python}", 600))
    return lines


def refuse_payloads(
    data: dict[str, Any], source: str, kid: bytes | None
) -> UntrustedPackError:
    """The refusal of a manifest carrying payloads that nobody trusted (returned, not raised).

    ``kid`` is the key id of a signed file that was read without a key. At most 20 payloads
    are listed (the rest are counted).
    """
    lines = _payload_lines(data)
    shown = lines[:20] + ([f"  ... and {len(lines) - 20} more"] if len(lines) > 20 else [])
    inspect = f"`specpack inspect {source}` shows the whole file."
    if kid is not None:
        signed = f"The file is signed (key id {kid.decode('ascii')}) but no key was given:"
        python = f"{signed} pass key=K to check it, or trust=True. {inspect}"
        cli = f"{signed} add --key-file PATH to check it, or --trust. {inspect}"
    else:
        python = ("Pass trust=True only if you trust whoever made the file, or have it signed "
                  f"(specpack.dump(pack, path, key=K)) and load with key=K. {inspect}")
        cli = ("Add --trust only if you trust whoever made the file, or have it signed "
               f"(specpack capture ... --key-file PATH) and add --key-file PATH. {inspect}")
    return UntrustedPackError(
        f"{source}: carries {len(lines)} by-value payload(s), which make() would unpickle "
        "and so run:\n" + "\n".join(shown) + "\nNothing was unpickled.",
        python=python, cli=cli,
    )


def _payloads(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(v, digest=k) for k, v in data["payloads"].items() if type(v) is dict]

