"""Who may say what a pack file runs, checked before any import or unpickling: every code
reference must lie inside ``allow`` (when given; checked again at ``make()``), and payloads
(cloudpickle, which runs code) need ``trust=True`` or a key that verifies the file."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .._carry.allowlist import may_import, valid_entry
from .._errors import UntrustedPackError
from .._text import printable
from .._typedjson.decode import Decoder
from .._typedjson.tags import dotted_name
from .._typedjson.walk import Found, Path
from .._typedjson.walk import payload_uses as _uses
from .._typedjson.walk import references as _references
from .manifest import code_payloads
from .schema import is_make_wrapper, spec_entry_points

__all__ = ["check_allowed", "manifest_references", "named_modules", "normalize_allow",
           "payload_uses", "refuse_payloads"]

#: Refusals listed in one error (the rest are counted).
_SHOWN = 10


def manifest_references(data: dict[str, Any], source: str = "<manifest>"
                        ) -> Iterator[tuple[Found, bool]]:
    """``(found, is_layer_class)`` of every ``$ref``/``$enum`` of a parsed manifest, then of
    the spec's entry-point strings (``found.tag == "string"``; PackFormatError if the spec does
    not decode)."""
    for root in ("entry_point", "kwargs", "spec"):
        yield from ((f, False) for f in _references(data.get(root), root))
    spec = data.get("spec")
    layers = data.get("layers")
    for i, layer in enumerate(layers if type(layers) is list else ()):
        if type(layer) is not dict:
            continue
        at: Path = ("layers", i)
        here: Path = (at, "class")
        yield from ((f, f.tag == "$ref" and f.at == here)
                    for f in _references(layer.get("class"), here))
        yield from ((f, False) for f in _references(layer.get("kwargs"), (at, "kwargs")))
    if type(spec) is dict:
        table = data.get("payloads")
        decoded = Decoder(table if type(table) is dict else {}, source).value(spec, "spec")
        if type(decoded) is dict:
            for place, text in spec_entry_points(decoded):
                yield Found(place, "string", text), False


def named_modules(data: dict[str, Any], source: str = "<manifest>"
                  ) -> list[tuple[str, str, str]]:
    """``(where, module, qualname)`` of every code reference of a parsed manifest, in the
    order of :func:`manifest_references` (places raw: a JSON writer escapes them)."""
    return [(f.where, f.module, f.qualname) for f, _ in manifest_references(data, source)]


def normalize_allow(allow: Iterable[str] | str | None) -> tuple[str, ...] | None:
    """``allow`` as a tuple of entries: module names (``"my_pkg"``) or exact references
    (``"my_pkg.envs:make_env"``); None stays None (no allow-list)."""
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


def _problem(found: Found) -> str | None:
    """Why a reference cannot be checked against ``allow`` at all (None: it can); gymnasium
    reads an entry-point string as ``module:attribute``, so a dotted one is refused too."""
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
    """Refuse (UntrustedPackError, listing up to ten) the references outside ``prefixes``: a
    module entry admits the modules inside it, an exact entry its reference, and ``make()``'s
    own wrappers are always admitted as layer classes; malformed references are refused too."""
    backend = data.get("backend")
    refused: list[str] = []
    tops: set[str] = set()
    example = ""
    for found, layer_class in manifest_references(data, source):
        mod = found.module
        why = _problem(found)
        if why is None and (may_import(mod, found.qualname, prefixes) or (
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
            cli=f"Add {' '.join('--allow ' + n for n in names)} {why}" if names else None)


def payload_uses(data: dict[str, Any]) -> dict[str, list[str]]:
    """digest -> the manifest places that use it (raw, bounded text; linear walk)."""
    uses: dict[str, list[str]] = {}
    for root in ("entry_point", "kwargs", "spec", "layers"):
        for digest, found in _uses(data.get(root), root).items():
            uses.setdefault(digest, []).extend(f.where for f in found)
    return uses


def refuse_payloads(data: dict[str, Any], source: str, kid: bytes | None
                    ) -> UntrustedPackError:
    """The refusal of a manifest carrying payloads that nobody trusted (returned, not raised);
    ``kid`` is the key id of a signed file read without a key."""
    uses = payload_uses(data)
    lines = []
    for entry in code_payloads(data):
        digest = entry["digest"]
        places = uses.get(digest, [])
        at = ", ".join(places[:5]) or "not referenced"
        if len(places) > 5:
            at += f" and {len(places) - 5} more places"
        python = entry.get("python") or "unknown"
        lines.append(printable(
            f"  - {entry.get('kind')} {entry.get('name')} at {at}: {entry.get('size')} bytes, "
            f"{digest}, cloudpickle for Python {python}", 600))
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
        python=python, cli=cli)
