"""The PettingZoo backend (``pettingzoo>=1.24``): multi-agent envs of either API.

Resolution (:mod:`.resolve`, live stacks walked by :mod:`.stack`), building, the multi-agent
rollout of verify and the audit (:mod:`.trace`), and the env modules an audit walks: before 1.27
PettingZoo has no registry, a family package (``pettingzoo.butterfly``) holds one module per env
and version (``pistonball_v6``) with the factories ``env`` and ``parallel_env``.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import pettingzoo
from pettingzoo.utils.env import AECEnv, ParallelEnv

from ..._core._backends._shared import Plans, construct, load_steps, raise_wrapped
from ..._core._backends.recipe import Blueprint, PackLike
from ..._core._carry.values import materialize
from ..._core._errors import BuildError, CaptureError
from ..._core._text import one_line
from . import resolve as _resolve
from . import trace
from .stack import is_env

__all__ = ["BACKEND", "FACTORIES", "EnvModule", "PettingZooBackend", "claims", "env_modules",
           "missing_package"]

#: What every build of one blueprint in this process shares: the entry point and the layers.
_plans = Plans(lambda bp: (bp.entry.load(), load_steps(bp)))
#: The factories an env module may define, in the order the audit captures them.
FACTORIES = ("parallel_env", "env")
_ENV_MODULE = re.compile(r"^[a-z][a-z0-9_]*_v\d+$")


def _owns(obj: Any) -> bool:
    """Whether ``obj`` is a live PettingZoo env or wrapper, or a registry spec (1.27+)."""
    return isinstance(obj, (AECEnv, ParallelEnv, getattr(pettingzoo, "EnvSpec", ())))


def claims(obj: Any) -> bool:
    """Whether ``obj`` is PettingZoo's: an env, wrapper, registry spec, env class, or a factory
    defined in a PettingZoo module (``pistonball_v6.parallel_env``), forwarding its kwargs to a
    PettingZoo env class (``mpe2.simple_v3.env``) or annotated to return one."""
    if _owns(obj):
        return True
    if isinstance(obj, type):
        return issubclass(obj, (AECEnv, ParallelEnv))
    if not callable(obj):
        return False
    module = getattr(obj, "__module__", None)
    if isinstance(module, str) and module.startswith("pettingzoo."):
        return True
    target = _resolve.kwargs_target(obj)  # a factory forwarding **kwargs to an env class
    try:
        returns = inspect.signature(obj, eval_str=True).return_annotation
    except Exception:  # noqa: BLE001 - an annotation that does not evaluate claims nothing
        returns = None
    return any(isinstance(t, type) and issubclass(t, (AECEnv, ParallelEnv))
               for t in (target, returns))


def _check(label: str, env: Any, what: str) -> None:
    if not is_env(env):
        raise BuildError(
            f"{what} of pack {label} returned {type(env).__module__}.{type(env).__qualname__}, "
            "not a PettingZoo AECEnv or ParallelEnv; capture a PettingZoo env or factory"
        )


def _build(bp: Blueprint, kwargs: dict[str, Any]) -> Any:
    """The env of ``bp``: its entry point called with the final ``kwargs``, then each layer
    innermost first as ``layer(env, **kwargs)`` (BuildError: a step raised or gave no env)."""
    creator, steps = _plans.of(bp)
    env = construct(bp.label, bp.entry.name, creator, kwargs, None, "")
    _check(bp.label, env, f"the entry point {bp.entry.name}")
    try:
        for layer, fixed, lowered in steps:
            kw = fixed if fixed is not None else materialize(dict(lowered))
            env = layer(env, **kw) if kw else layer(env)
            _check(bp.label, env, f"the layer {getattr(layer, '__qualname__', layer)!s}")
    except Exception as e:  # noqa: BLE001 - raise_wrapped re-raises it
        raise_wrapped(bp.label, e)
    return env


@dataclass
class EnvModule:
    """One env module: its name, family, the factories it defines, or why it cannot load."""

    name: str
    family: str
    factories: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    missing: str | None = None


def missing_package(exc: BaseException) -> str | None:
    """The package an import failure names (``ModuleNotFoundError.name``, or PettingZoo's
    ``DependencyNotInstalled`` hint ``pip install pettingzoo[...]``), else None."""
    node: BaseException | None = exc
    for _ in range(10):
        if node is None:
            return None
        if isinstance(node, ModuleNotFoundError) and node.name:
            return node.name.partition(".")[0]
        hint = re.search(r"pip install ['\"]?([\w\-\[\],.]+)", str(node))
        if hint:
            return hint.group(1)
        node = node.__cause__ or node.__context__
    return None


def _family_modules(package: str) -> list[str]:
    pkg = importlib.import_module(package)
    path = getattr(pkg, "__path__", None)
    if path is None:
        return [package] if _ENV_MODULE.match(package.rpartition(".")[2]) else []
    return sorted(f"{package}.{m.name}" for m in pkgutil.iter_modules(path)
                  if not m.ispkg and _ENV_MODULE.match(m.name))


def env_modules(packages: list[str]) -> list[EnvModule]:
    """Every env module of ``packages`` (``"pettingzoo.butterfly"``, or one env module), in
    name order; one that cannot be imported carries the error and the missing package."""
    out: list[EnvModule] = []
    for package in packages:
        family = package.split(".")[1] if package.count(".") >= 1 else package
        try:
            names = _family_modules(package)
        except Exception as e:  # noqa: BLE001 - a family that does not import is reported
            out.append(EnvModule(package, family, error=one_line(e), missing=missing_package(e)))
            continue
        for name in names:  # each on its own: one missing system library hides no other module
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    module = importlib.import_module(name)
                    out.append(EnvModule(name, family, factories={
                        f: getattr(module, f) for f in FACTORIES
                        if callable(getattr(module, f, None))}))
            except Exception as e:  # noqa: BLE001 - a missing system library, named
                out.append(EnvModule(name, family, error=one_line(e), missing=missing_package(e)))
    return out


class PettingZooBackend:
    """The backend for PettingZoo envs (AEC and parallel) and SuperSuit's wrappers on them."""

    name = "pettingzoo"
    #: Libraries whose factories and classes are PettingZoo's (SuperSuit wraps PettingZoo envs).
    library_prefixes: tuple[str, ...] = ("pettingzoo.", "supersuit.")
    #: The multi-agent rollout recorder of verify and the audit, reached through the core's
    #: backend table (the tools never import the edge).
    tracer = trace
    env_modules = staticmethod(env_modules)
    owns = staticmethod(_owns)
    from_id = staticmethod(_resolve.from_id)
    from_spec = staticmethod(_resolve.from_spec)
    from_callable = staticmethod(_resolve.from_callable)
    from_env = staticmethod(_resolve.from_env)
    build = staticmethod(_build)

    def build_vector(self, bp: Blueprint, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
        raise BuildError(
            f"pack {bp.label}: a PettingZoo pack is never vector-only; vectorise it with "
            "specpack.adapters.supersuit_vec(pack, n, num_cpus)"
        )

    def register(self, pack: PackLike, env_id: str | None) -> str:
        raise CaptureError(
            f"pack {pack.label}: pack.register() puts a pack into gymnasium's registry; a "
            "PettingZoo env is built with pack.make() (or specpack.adapters.supersuit_vec)"
        )

    def memo_token(self, env_id: str) -> Any:
        """Registry captures are not memoised (PettingZoo's registry is a plain dict)."""
        return None

    def memo_valid(self, env_id: str, token: Any) -> bool:
        return False


BACKEND = PettingZooBackend()
