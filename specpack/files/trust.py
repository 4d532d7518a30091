"""Who may say what a pack file runs: allow-lists and the payload refusal.

Two checks, both made before anything is imported or unpickled:

- **References** (``$ref``, ``$enum``, and the spec's ``entry_point``,
  ``vector_entry_point`` and ``additional_wrappers`` strings) must name modules inside
  ``allow`` when an allow-list is given. The resolved objects are checked again at ``make()``
  (:meth:`specpack.carry.CodeRef.load`): each must be *defined* in an allowed module.
- **Payloads** (``$code``, ``$object``: cloudpickle, which runs code when unpickled) are
  refused unless the caller trusts the file (``trust=True``) or it verifies with a key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._text import printable
from ..carry.code import allowed
from ..errors import UntrustedPackError

__all__ = ["check_allowed", "named_modules", "normalize_allow", "payload_uses",
           "refuse_payloads"]

#: Wrapper classes ``make()`` itself adds; ``allow`` always admits them for layer classes.
_MAKE_WRAPPERS = frozenset({
    "PassiveEnvChecker", "OrderEnforcing", "TimeLimit", "StepAPICompatibility",
    "EnvCompatibility",
})


def named_modules(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(where, module, qualname)`` for every code reference in a parsed manifest.

    Covers ``$ref`` and ``$enum`` nodes in the entry point, kwargs, spec and layers, and the
    spec's ``vector_entry_point`` string. Iterative: safe on any nesting.
    """
    found: list[tuple[str, str, str]] = []
    stack: list[tuple[Any, str]] = []
    for key in ("layers", "spec", "kwargs", "entry_point"):
        stack.append((data.get(key), key))
    while stack:
        node, where = stack.pop()
        if type(node) is dict:
            for k in ("$ref", "$enum"):
                v = node.get(k)
                if type(v) is str:
                    mod, _, qual = v.partition(":")
                    found.append((where, mod, qual))
            for k, v in reversed(list(node.items())):
                if k not in ("$ref", "$enum"):
                    stack.append((v, f"{where}.{k}"))
        elif type(node) is list:
            for i in range(len(node) - 1, -1, -1):
                stack.append((node[i], f"{where}[{i}]"))
    spec = data.get("spec")
    vec = spec.get("vector_entry_point") if type(spec) is dict else None
    if type(vec) is str and ":" in vec:
        mod, _, qual = vec.partition(":")
        found.append(("spec.vector_entry_point", mod, qual))
    return found


def entry_modules(data: dict[str, Any]) -> list[str]:
    """Every module a parsed manifest names by reference (entry point, wrappers, kwargs)."""
    return list(dict.fromkeys(mod for _, mod, _ in named_modules(data)))


def _dotted(name: str) -> bool:
    return bool(name) and all(part.isidentifier() for part in name.split("."))


def normalize_allow(allow: Iterable[str] | str | None) -> tuple[str, ...] | None:
    """``allow`` as a tuple of module names (``None`` stays None: no allow-list)."""
    if allow is None:
        return None
    try:
        prefixes = (allow,) if isinstance(allow, str) else tuple(allow)
    except TypeError:
        raise UntrustedPackError(f"allow={allow!r} must be a list of module names, such as "
                                 "['my_pkg']") from None
    for p in prefixes:
        if type(p) is not str or not _dotted(p):
            raise UntrustedPackError(f"allow={list(prefixes)!r}: each entry must be a module "
                                     f"name such as 'my_pkg' (got {p!r})")
    return prefixes


def is_make_wrapper(backend: Any, where: str, module: str, qualname: str) -> bool:
    """Whether a layer class is one of the wrappers ``make()`` itself adds (always allowed)."""
    return bool(
        where.startswith("layers[") and where.endswith("].class")
        and type(backend) is str
        and (module == f"{backend}.wrappers" or module.startswith(f"{backend}.wrappers."))
        and qualname in _MAKE_WRAPPERS
    )


def check_allowed(data: dict[str, Any], prefixes: tuple[str, ...], source: str) -> None:
    """Refuse (before any import) a manifest naming modules outside ``prefixes``.

    A module is allowed when it equals an entry or lies inside one (``"my_pkg"`` admits
    ``my_pkg.envs``). The wrappers ``make()`` itself adds (``PassiveEnvChecker``,
    ``OrderEnforcing``, ``TimeLimit``, from the backend's ``wrappers`` package) are always
    admitted as layer classes. Raises :class:`~specpack.errors.UntrustedPackError`.
    """
    backend = data.get("backend")
    refused: list[str] = []
    tops: set[str] = set()
    for where, mod, qual in named_modules(data):
        if allowed(mod, prefixes) or is_make_wrapper(backend, where, mod, qual):
            continue
        refused.append(printable(f"{where} = {mod}:{qual}"))
        tops.add(printable(mod.partition(".")[0], 60))
        if len(refused) > 10:
            break
    if refused:
        raise UntrustedPackError(
            f"{source}: names code outside allow={list(prefixes)}: " + "; ".join(refused[:10])
            + (" (and more)" if len(refused) > 10 else "")
            + f". Nothing was imported. Add {', '.join(repr(t) for t in sorted(tops))} to "
            "allow if you trust that code"
        )


def _payload_lines(data: dict[str, Any]) -> list[str]:
    uses = payload_uses(data)
    lines = []
    for entry in _payloads(data):
        digest = entry["digest"]
        at = ", ".join(uses.get(digest, [])) or "not referenced"
        python = entry.get("python") or "unknown"
        lines.append(printable(
            f"  - {entry.get('kind')} {entry.get('name')} at {at}: {entry.get('size')} bytes, "
            f"{digest}, cloudpickle for Python {python}", 600))
    return lines


def payload_uses(data: dict[str, Any]) -> dict[str, list[str]]:
    """digest -> the manifest places that reference it (iterative walk)."""
    uses: dict[str, list[str]] = {}
    stack: list[tuple[Any, str]] = [(data.get(k), k) for k in
                                    ("layers", "spec", "kwargs", "entry_point")]
    while stack:
        node, where = stack.pop()
        if type(node) is dict:
            for tag in ("$code", "$object"):
                if type(node.get(tag)) is str:
                    uses.setdefault(node[tag], []).append(where)
            stack.extend((v, f"{where}.{k}") for k, v in node.items())
        elif type(node) is list:
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(node))
    return uses


def refuse_payloads(
    data: dict[str, Any], source: str, kid: bytes | None
) -> UntrustedPackError:
    """The refusal of a manifest carrying payloads that nobody trusted (returned, not raised).

    ``kid`` is the key id of a signed file that was read without a key.
    """
    lines = _payload_lines(data)
    if kid is not None:
        how = (f"The file is signed (key id {kid.decode('ascii')}) but no key was given: "
               "pass key=K to check it, or trust=True")
    else:
        how = ("Pass trust=True only if you trust whoever made the file, or have it signed "
               "(specpack.dump(pack, path, key=K)) and load with key=K")
    return UntrustedPackError(
        f"{source}: carries {len(lines)} by-value payload(s), which make() would unpickle "
        "and so run:\n" + "\n".join(lines)
        + f"\nNothing was unpickled. {how}. `specpack inspect {source}` shows the whole file."
    )


def _payloads(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(v, digest=k) for k, v in data["payloads"].items() if type(v) is dict]
