"""The version record a pack carries, and the checks ``make()`` runs against it and ``requires``.

``make()`` warns (:class:`~specpack.VersionSkewWarning`) when the backend, numpy or the env's
distribution differ here, and :func:`check_requires` checks ``requires``."""

from __future__ import annotations

import functools
import platform
import shlex
import sys
import warnings
from collections.abc import Mapping

from ._errors import BuildError, VersionSkewWarning
from ._text import printable, short
from ._version import __version__

__all__ = ["check_requires", "check_skew", "current_versions", "skew_free"]

#: Record keys that make() compares with the running versions.
SKEW_KEYS = ("gymnasium", "gym", "numpy", "pettingzoo", "supersuit")
#: Read from the module's ``__version__`` (fast in a fresh worker), not importlib.metadata.
_SELF_VERSIONED = frozenset({"gymnasium", "gym", "numpy", "cloudpickle"})


@functools.lru_cache(maxsize=64)
def _dist_version(dist: str) -> str | None:
    version = getattr(sys.modules.get(dist), "__version__", None)
    if dist in _SELF_VERSIONED and isinstance(version, str):
        return str(version)
    import importlib.metadata as md  # lazy: ~20 ms of import time a worker rarely needs

    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1024)
def _record(backend: str, env: tuple[str, str] | None) -> tuple[tuple[str, str], ...]:
    out = {
        "python": platform.python_version(),
        "platform": f"{sys.platform}-{platform.machine()}",
        "specpack": __version__,
        backend: _dist_version(backend) or "unknown",
        "numpy": _dist_version("numpy") or "unknown",
        "cloudpickle": _dist_version("cloudpickle") or "unknown",
    }
    if env is not None and env[0] not in out:
        out["env_distribution"], out["env_version"] = env
    return tuple(out.items())


def current_versions(backend: str, env: tuple[str, str] | None) -> dict[str, str]:
    """The record a pack captured now would carry, as a new dict. ``env``: the env code's
    :func:`._provenance.distribution_of`, passed in so that a worker never loads that lookup."""
    return dict(_record(backend, env))


def check_skew(recorded: Mapping[str, str], what: str) -> None:
    """Warn (``VersionSkewWarning``) for each backend/numpy/env version that differs here."""
    pairs: list[tuple[str, str | None]] = [(k, recorded[k]) for k in SKEW_KEYS if k in recorded]
    if recorded.get("env_distribution"):
        pairs.append((recorded["env_distribution"], recorded.get("env_version")))
    here = {name: _dist_version(name) or "not installed" for name, _ in pairs}
    diffs = [f"{n} {v} (captured) vs {here[n]} (here)" for n, v in pairs if v != here[n]]
    if diffs:
        warnings.warn(f"{what} was captured under other versions: {'; '.join(diffs)}. The "
                      "rebuild may differ; prove it with specpack.check(pack) on a sealed pack "
                      "(specpack.seal(pack) where it was captured, or specpack check FILE for a "
                      "sealed file), or capture again here", VersionSkewWarning, stacklevel=4)


def skew_free(requires: Mapping[str, str], recorded: Mapping[str, str]) -> dict[str, str]:
    """``requires`` without the distributions :func:`check_skew` already compares (the
    backend, numpy, the env's distribution), so that one difference gives one warning."""
    compared = {k for k in SKEW_KEYS if k in recorded}
    if recorded.get("env_distribution"):
        compared.add(recorded["env_distribution"])
    return {k: v for k, v in requires.items() if k not in compared}


def check_requires(requires: Mapping[str, str], *, label: str) -> None:
    """Raise :class:`~specpack.BuildError` for distributions of ``requires`` missing here, warn
    (to ``make()``'s caller) for other versions; compared once per process per ``requires``."""
    try:
        missing, differing = _compare(tuple(sorted(requires.items())))
    except TypeError:  # not str -> str (a damaged or forged pack)
        raise BuildError(f"pack {label}: its requires must map distribution names to version "
                         f"strings, not {short(requires, 200)}; capture the pack again") from None
    if missing:
        command = "pip install " + " ".join(shlex.quote(f"{n}=={v}") for n, v in missing)
        names = ", ".join(printable(n, 80) for n, _ in missing)
        raise BuildError(f"pack {label} needs distributions that are not installed here "
                         f"({names}); install them first: {printable(command, 2000)}")
    if differing:
        text = "; ".join(f"{printable(n, 80)} {printable(v, 80)} (captured) vs "
                         f"{printable(h, 80)} (here)" for n, v, h in differing)
        fix = " ".join(shlex.quote(f"{n}=={v}") for n, v, _ in differing)
        warnings.warn(f"pack {label} was captured with other versions of the distributions it "
                      f"needs: {text}. The rebuild may differ: install the captured ones (pip "
                      f"install {printable(fix, 2000)}), or prove the build with "
                      "specpack.check(pack) on a sealed pack", VersionSkewWarning, stacklevel=4)


@functools.lru_cache(maxsize=256)
def _compare(items: tuple[tuple[str, str], ...]
             ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str, str], ...]]:
    if not all(isinstance(name, str) and isinstance(version, str) for name, version in items):
        raise TypeError(items)
    found = [(name, version, _dist_version(name)) for name, version in items]
    return (tuple((n, v) for n, v, here in found if here is None),
            tuple((n, v, here) for n, v, here in found if here is not None and here != v))
