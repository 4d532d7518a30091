"""The version record a pack carries, and the checks ``make()`` runs against it and ``requires``.

``make()`` warns (:class:`~specpack.VersionSkewWarning`) when the backend, numpy or the env's
distribution differ here, and :func:`check_requires` checks ``requires``.
"""

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

#: ``(distribution, version)`` of the env's code (:func:`._provenance.distribution_of`, passed
#: in by capture so that a worker comparing versions never loads that lookup).
EnvDistribution = tuple[str, str] | None

#: Record keys that make() compares with the running versions.
SKEW_KEYS = ("gymnasium", "gym", "numpy", "pettingzoo", "supersuit")


#: Read from the module's ``__version__`` (fast in a fresh worker), not importlib.metadata.
_SELF_VERSIONED = frozenset({"gymnasium", "gym", "numpy", "cloudpickle"})


@functools.lru_cache(maxsize=64)
def _dist_version(dist: str) -> str | None:
    mod = sys.modules.get(dist)
    if dist in _SELF_VERSIONED and isinstance(getattr(mod, "__version__", None), str):
        return str(mod.__version__)  # type: ignore[union-attr]
    import importlib.metadata as md  # lazy: ~20 ms of import time a worker rarely needs

    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1024)
def _record(backend: str, env: EnvDistribution) -> tuple[tuple[str, str], ...]:
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


def current_versions(backend: str, env: EnvDistribution) -> dict[str, str]:
    """The record a pack captured now would carry, as a new dict."""
    return dict(_record(backend, env))


def check_skew(recorded: Mapping[str, str], what: str) -> None:
    """Warn (``VersionSkewWarning``) for each backend/numpy/env version that differs here."""
    pairs: list[tuple[str, str | None]] = [(k, recorded[k]) for k in SKEW_KEYS if k in recorded]
    if recorded.get("env_distribution"):
        pairs.append((recorded["env_distribution"], recorded.get("env_version")))
    here = {name: _dist_version(name) or "not installed" for name, _ in pairs}
    diffs = [f"{n} {v} (captured) vs {here[n]} (here)" for n, v in pairs if v != here[n]]
    if diffs:
        warnings.warn(
            f"{what} was captured under other versions: {'; '.join(diffs)}. The rebuild may "
            "differ; prove it with specpack.check(pack) on a sealed pack (specpack.seal(pack) "
            "where it was captured, or specpack check FILE for a sealed file), or capture again "
            "here",
            VersionSkewWarning,
            stacklevel=4,
        )


def skew_free(requires: Mapping[str, str], recorded: Mapping[str, str]) -> dict[str, str]:
    """``requires`` without the distributions :func:`check_skew` already compares (the
    backend, numpy, the env's distribution), so that one difference gives one warning."""
    compared = {k for k in SKEW_KEYS if k in recorded}
    if recorded.get("env_distribution"):
        compared.add(recorded["env_distribution"])
    return {k: v for k, v in requires.items() if k not in compared}


def check_requires(requires: Mapping[str, str], *, label: str, stacklevel: int = 4) -> None:
    """Raise :class:`~specpack.BuildError` for distributions of ``requires`` missing here, warn
    for other versions (``stacklevel`` default: the caller of ``make()``); compared once per
    process per ``requires``. ``label``: how messages name the pack."""
    try:
        missing, differing = _compare(tuple(sorted(requires.items())))
    except TypeError:  # not str -> str (a damaged or forged pack)
        raise BuildError(
            f"pack {label}: its requires must map distribution names to version strings, not "
            f"{short(requires, 200)}; capture the pack again"
        ) from None
    if missing:
        command = "pip install " + " ".join(shlex.quote(f"{n}=={v}") for n, v in missing)
        names = ", ".join(printable(n, 80) for n, _ in missing)
        raise BuildError(
            f"pack {label} needs distributions that are not installed here ({names}); install "
            f"them first: {printable(command, 2000)}"
        )
    if differing:
        text = "; ".join(f"{printable(n, 80)} {printable(v, 80)} (captured) vs "
                         f"{printable(h, 80)} (here)" for n, v, h in differing)
        fix = " ".join(shlex.quote(f"{n}=={v}") for n, v, _ in differing)
        warnings.warn(
            f"pack {label} was captured with other versions of the distributions it needs: "
            f"{text}. The rebuild may differ: install the captured ones "
            f"(pip install {printable(fix, 2000)}), or prove the build with specpack.check(pack) "
            f"on a sealed pack",
            VersionSkewWarning,
            stacklevel=stacklevel,
        )


@functools.lru_cache(maxsize=256)
def _compare(items: tuple[tuple[str, str], ...]
             ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str, str], ...]]:
    missing, differing = [], []
    for name, version in items:
        if not (isinstance(name, str) and isinstance(version, str)):
            raise TypeError(name, version)
        here = _dist_version(name)
        if here is None:
            missing.append((name, version))
        elif here != version:
            differing.append((name, version, here))
    return tuple(missing), tuple(differing)
