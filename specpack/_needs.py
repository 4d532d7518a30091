"""What a pack needs where it is built, found at capture: ``requires`` and ``assets``.

``requires`` names the installed distributions of the code a pack names, by reference or by
value: the modules of its classes' MROs and, one level deep, what those modules import (mujoco
for an Ant, or for a user's class that subclasses it); when capture builds the env (a live
env, recorded spaces), also of the objects the env holds. It is decided at capture: a build
never changes it. ``assets`` are the files the env is given: kwargs and the entry
point's defaults that name an existing file, and the paths named in ``capture(assets=...)``.
Files inside the standard library or an installed distribution are not assets (their
distribution is required instead). The mechanisms are :mod:`specpack._provenance` and
:mod:`specpack._assets`; this module only applies them to a pack.
"""

from __future__ import annotations

import errno
import inspect
import os
import pathlib
import sys
import sysconfig
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ._assets import Asset, find_paths, read_asset
from ._carry.carried import Blob
from ._carry.code import CodeRef, code_ref, live_object
from ._carry.values import lower_mapping
from ._errors import CaptureError
from ._provenance import (
    by_value_registry,
    code_modules,
    essential,
    requires_of,
    source_of,
    user_modules,
)

if TYPE_CHECKING:
    from ._pack import SpecPack

__all__ = ["built_requires", "check_needs_options", "entry_defaults", "find_assets", "requires_of_pack",
           "user_by_value", "user_code", "with_needs"]


def check_needs_options(assets: Any, self_contained: bool, limit: Any,
                        by_value: bool | None) -> tuple[Any, ...]:
    """Check ``capture``'s ``assets``, ``self_contained`` and ``max_asset_bytes``.

    Returns the named assets as a tuple (one path alone is taken as one asset).
    """
    if type(limit) is not int or limit < 0:
        raise CaptureError(f"max_asset_bytes={limit!r} must be a number of bytes (an int >= 0)")
    if self_contained and by_value is False:
        raise CaptureError("self_contained=True carries the user's own code by value, which "
                           "by_value=False forbids; drop one of them")
    if isinstance(assets, (str, bytes, os.PathLike)):
        return (assets,)
    try:
        return tuple(assets)
    except TypeError:
        raise CaptureError(f"assets={assets!r} must be a list of paths (str or "
                           "os.PathLike)") from None


def entry_defaults(entry: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """The entry point's parameter defaults not overridden by ``given`` (nothing on failure)."""
    try:
        params = inspect.signature(entry).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in params
            if p.default is not inspect.Parameter.empty and p.name not in given
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _installed_dirs() -> tuple[str, ...]:
    names = ("stdlib", "platstdlib", "purelib", "platlib")
    paths = sysconfig.get_paths()
    return tuple({os.path.realpath(paths[n]) + os.sep for n in names if n in paths})


#: Where a path names the machine, not the env's data (``/dev/null``, ``/proc/cpuinfo``).
_SYSTEM_DIRS = tuple(os.sep + d + os.sep for d in ("proc", "sys", "dev", "run"))


def _user_file(path: str) -> bool:
    """Whether a path found in the kwargs or defaults is an asset: a regular file of the
    user's (not inside the stdlib, an installed distribution or a system folder).

    A folder is an asset only when named in ``assets=[...]``: a kwarg that names a folder is
    as often where the env writes (``log_dir="/tmp"``, ``video_folder="."``) as what it
    reads, and reading a whole folder to digest it must be asked for.
    """
    real = os.path.realpath(path)
    return (os.path.isfile(real) and not real.startswith(_installed_dirs())
            and not real.startswith(_SYSTEM_DIRS))


def find_assets(
    kwargs: Mapping[str, Any], defaults: Mapping[str, Any], named: Iterable[Any], *,
    carry: bool, limit: int, label: str,
) -> tuple[tuple[Asset, ...], dict[str, Any]]:
    """The assets of an env and, when carried, the defaults that name one.

    Returns the assets (kwargs' first, then defaults', then ``named``) and the entry-point
    defaults naming a carried file: those become explicit kwargs, so that ``make()`` can pass
    the local copy's path (the default itself is the capturing machine's path).
    """
    found = [p for p in find_paths(kwargs) if _user_file(p)]
    from_defaults = {}
    for name, value in defaults.items():
        if not _absolute(value):
            continue  # a relative default is the env's to resolve (Ant's "ant.xml")
        for p in find_paths({name: value}):
            if _user_file(p) and p not in found:
                found.append(p)
                from_defaults[name] = value
    for item in named:
        try:
            p = os.path.abspath(os.fspath(item))
        except TypeError:
            raise CaptureError(f"assets=[...] takes paths (str or os.PathLike), got "
                               f"{type(item).__name__} for {label!r}") from None
        if not os.path.exists(p):
            from ._error_twins import file_error_for  # loads on a failure

            raise file_error_for(errno.ENOENT, f"assets=[...] names {p}, which does not exist; "
                                 f"give the path of a file or folder {label!r} reads", p)
        if p not in found:
            found.append(p)
    assets: list[Asset] = []
    left = limit
    for p in found:
        asset = read_asset(p, carry=carry, limit=max(left, 0))
        left -= asset.size if carry else 0
        assets.append(asset)
    return tuple(assets), (from_defaults if carry else {})


def _absolute(value: Any) -> bool:
    """Whether ``value`` is an absolute path (a str or ``os.PathLike``)."""
    try:
        path = os.fspath(value)
    except TypeError:
        return False
    return isinstance(path, str) and os.path.isabs(path)


def _looks_like_path(text: str) -> bool:
    """A relative string that names an existing file by a path-like name: ``robots/a.xml``
    or ``a.xml`` (not ``"human"``, even if such a file happens to be in the cwd)."""
    if not text or "\0" in text or os.path.isabs(text):
        return False
    named = os.sep in text or "/" in text or bool(os.path.splitext(text)[1])
    return named and os.path.exists(text)


def absolute_kwargs(given: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level kwargs that are relative paths of existing files, made absolute.

    A relative path is read from the cwd of wherever the env is built; the asset recorded
    (and checked) is the file it names here. Passing the absolute path keeps the two the same
    file (another cwd elsewhere would otherwise read another file, unchecked).
    """
    out: dict[str, Any] = {}
    for key, value in given.items():
        if isinstance(value, str) and _looks_like_path(value):
            out[key] = os.path.abspath(value)
        elif isinstance(value, pathlib.PurePath) and _looks_like_path(str(value)):
            out[key] = type(value)(os.path.abspath(value))
    return out


def lowered(extra: Mapping[str, Any], label: str) -> tuple[dict[str, Any], bool]:
    """Default values made explicit, lowered as capture lowers kwargs."""
    return lower_mapping(dict(extra), label, "kwargs", None)


def requires_of_pack(code: Iterable[CodeRef]) -> dict[str, str]:
    """The distributions of the code a pack names: of each reference's module, and of the
    modules its live object refers to (:func:`~specpack._provenance.code_modules`: the classes
    of its MRO, and one level deep what those modules import), by value or by reference; those
    that another of them depends on are left out (:func:`~specpack._provenance.essential`)."""
    refs = list(code)
    names = tuple(dict.fromkeys([*(c.module for c in refs if not c.by_value),
                                 *code_modules(_live(c) for c in refs)]))
    key = (names, by_value_registry())
    found = _requires_memo.get(key)
    if found is None:
        if len(_requires_memo) > 1024:
            _requires_memo.clear()
        found = _requires_memo[key] = essential(requires_of(names))
    return dict(found)


#: What :func:`requires_of_pack` found, by the modules it read and the by-value registry.
_requires_memo: dict[tuple[tuple[str, ...], frozenset[str]], dict[str, str]] = {}


def _live(ref: CodeRef) -> Any:
    """The object ``ref`` stands for here (None if it cannot be had without a payload)."""
    try:
        return live_object(ref)
    except Exception:  # noqa: BLE001 - code that cannot be loaded here names nothing more
        return None


def built_requires(env: Any, imported: Iterable[str] = ()) -> dict[str, str]:
    """The distributions of a built env's code: of its unwrapped class (its MRO, and what
    those modules import) and of the classes of the objects it holds (an ``MjModel``: the
    distribution of ``mujoco._structs``; one that the constructor imported: its own).

    ``imported`` is not read: what a build imports depends on what the process had loaded
    before, and a pack's ``requires`` is the same wherever it was captured.
    """
    node = getattr(env, "unwrapped", env)
    held = [type(v).__module__ for v in list(getattr(node, "__dict__", {}).values())]
    return essential(requires_of([*code_modules([type(node)]),
                                  *(m for m in held if isinstance(m, str) and m in sys.modules)]))


def user_by_value(ref: CodeRef, obj: Any, self_contained: bool, what: str) -> CodeRef:
    """``ref``, carried by value instead when self-contained and it is the user's own code."""
    if (not self_contained or ref.by_value or ref.module in ("__main__", "__mp_main__")
            or ref.module not in sys.modules or source_of(ref.module).origin != "user"):
        return ref
    return code_ref(obj, by_value=True, what=what)


def user_code() -> list[str]:
    """The loaded modules that are the user's own (what ``self_contained`` carries by value)."""
    return user_modules(name for name, mod in list(sys.modules.items())
                        if mod is not None and name != "__main__")


#: Packs with their needs recorded, by the resolved pack's identity: a memoised capture with
#: the same needs returns the same object again.
_needs_memo: dict[int, tuple[SpecPack, SpecPack]] = {}


def _path_view(value: Any) -> Any:
    """Lowered kwargs with only what may name a file: strings, and the ``pathlib`` paths
    capture itself just pickled (loaded back: nothing else is unpickled at capture, so no
    object's code runs here; any other carried object counts as no path)."""
    if isinstance(value, dict):
        return {k: _path_view(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_path_view(v) for v in value]
    if isinstance(value, Blob):
        return value.load() if value.type_name.startswith("pathlib.") else None
    return value


def _names_no_path(values: Iterable[Any]) -> bool:
    """Whether no value (nested in lists, tuples, dicts) is a str or ``os.PathLike``."""
    stack = list(values)
    while stack:
        v = stack.pop()
        if isinstance(v, (str, os.PathLike)):
            return False
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return True


def with_needs(pack: SpecPack, named: tuple[Any, ...], carry: bool, limit: int) -> SpecPack:
    """``pack`` with ``requires`` and ``assets`` recorded (files read now, every capture).

    A memoised capture (the same resolved pack) whose kwargs and entry-point defaults hold
    no string or path at all cannot name a file: its result is reused (capture's hot path).

    Parameters
    ----------
    pack
        The resolved pack.
    named
        The paths given in ``capture(assets=...)``.
    carry, limit
        Carry the files' bytes (self-contained), at most ``limit`` bytes in all.
    """
    hit = _needs_memo.get(id(pack))
    if hit is not None and hit[0] is pack and not named:
        return hit[1]
    entry = pack.entry_point
    obj = live_object(entry)
    given = pack._kwargs if pack._plain else _path_view(pack._kwargs)
    defaults = entry_defaults(obj, given)
    found, explicit = find_assets(given, defaults, named, carry=carry, limit=limit,
                                  label=pack.label)
    changes: dict[str, Any] = {
        "requires": requires_of_pack(c for c in pack.carried() if isinstance(c, CodeRef)),
        "assets": found,
    }
    explicit = {**absolute_kwargs(given), **explicit}
    if explicit:
        extra, plain = lowered(explicit, pack.label)
        changes.update(_kwargs={**pack._kwargs, **extra}, plain=pack._plain and plain)
    out = pack.evolve(**changes)
    if not named and _names_no_path([*given.values(), *defaults.values()]):
        if len(_needs_memo) > 4096:
            _needs_memo.clear()
        _needs_memo[id(pack)] = (pack, out)
    return out
