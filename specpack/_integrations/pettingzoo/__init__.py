"""The PettingZoo backend (``pettingzoo>=1.24``): multi-agent envs of either API.

Resolution (:mod:`.resolve`): a module's factory (``pistonball_v6.parallel_env``), an env class,
a live AEC or parallel stack (walked by :mod:`.stack`, SuperSuit's function-made wrappers
recovered by :mod:`.suits`), or a PettingZoo 1.27 registry spec. Building (:mod:`.build`):
the entry point, then every layer in its true order. The multi-agent rollout that verify and
the audit compare is :mod:`.trace`; the env modules the audit walks are :mod:`.catalog`.
"""

from __future__ import annotations

import inspect
from typing import Any

import pettingzoo
from pettingzoo.utils.env import AECEnv, ParallelEnv

from ..._core._backends.recipe import Blueprint, PackLike, Recipe
from ..._core._errors import BuildError, CaptureError
from . import build as _build
from . import catalog, trace
from . import resolve as _resolve

__all__ = ["BACKEND", "PettingZooBackend", "claims"]

#: Libraries whose factories and classes are PettingZoo's (SuperSuit wraps PettingZoo envs).
_PREFIXES = ("pettingzoo.", "supersuit.")


def _spec_type() -> Any:
    return getattr(pettingzoo, "EnvSpec", None)


def claims(obj: Any) -> bool:
    """Whether ``obj`` is PettingZoo's: an env, wrapper, registry spec, env class, or a factory
    defined in a PettingZoo module (``pistonball_v6.parallel_env``), forwarding its kwargs to a
    PettingZoo env class (``mpe2.simple_v3.env``) or annotated to return one."""
    if isinstance(obj, (AECEnv, ParallelEnv)):
        return True
    spec_type = _spec_type()
    if spec_type is not None and isinstance(obj, spec_type):
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


class PettingZooBackend:
    """The backend for PettingZoo envs (AEC and parallel) and SuperSuit's wrappers on them."""

    name = "pettingzoo"
    library_prefixes: tuple[str, ...] = _PREFIXES
    #: The multi-agent rollout recorder that verify and the audit use (:mod:`.trace`): the
    #: tools reach it through the core's backend table, never by importing the edge.
    tracer = trace

    def env_modules(self, targets: list[str]) -> Any:
        """The env modules of PettingZoo's families that ``targets`` name (:mod:`.catalog`)."""
        return catalog.env_modules(targets)

    def owns(self, obj: Any) -> bool:
        """Whether ``obj`` is a live PettingZoo env or wrapper, or a registry spec."""
        spec_type = _spec_type()
        return isinstance(obj, (AECEnv, ParallelEnv)) or (
            spec_type is not None and isinstance(obj, spec_type))

    def from_id(self, env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """``"parallel:butterfly/pistonball-v6"``: PettingZoo 1.27's registry (see :mod:`.resolve`)."""
        return _resolve.from_id(env_id, options, kwargs)

    def from_spec(self, spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """A PettingZoo 1.27 registry spec, as ``pettingzoo.make`` would build it."""
        return _resolve.from_spec(spec, options, kwargs)

    def from_callable(self, fn: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        """A factory (``pistonball_v6.parallel_env``) or env class with its kwargs."""
        return _resolve.from_callable(fn, options, kwargs)

    def from_env(self, env: Any) -> Recipe:
        """A live AEC or parallel stack, outermost first, with recovered arguments."""
        return _resolve.from_env(env)

    def build(self, bp: Blueprint, kwargs: dict[str, Any]) -> Any:
        """Build the env of ``bp`` (see :mod:`.build`)."""
        return _build.build(bp, kwargs)

    def build_vector(self, bp: Blueprint, num_envs: int | None, kwargs: dict[str, Any]) -> Any:
        """PettingZoo has no vector-only envs; vectorise with specpack.adapters.supersuit_vec."""
        raise BuildError(
            f"pack {bp.label}: a PettingZoo pack is never vector-only; vectorise it with "
            "specpack.adapters.supersuit_vec(pack, n, num_cpus)"
        )

    def register(self, pack: PackLike, env_id: str | None) -> str:
        """PettingZoo packs are built with ``pack.make()``; there is no registry to put them in."""
        raise CaptureError(
            f"pack {pack.label}: pack.register() puts a pack into gymnasium's registry; a "
            "PettingZoo env is built with pack.make() (or specpack.adapters.supersuit_vec)"
        )

    def memo_token(self, env_id: str) -> Any:
        """Registry captures are not memoised (PettingZoo's registry is a plain dict)."""
        return None

    def memo_valid(self, env_id: str, token: Any) -> bool:
        """Never called: :meth:`memo_token` memoises nothing."""
        return False


BACKEND = PettingZooBackend()
