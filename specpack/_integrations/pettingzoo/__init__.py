"""The PettingZoo backend (``pettingzoo>=1.24``): multi-agent envs of either API.

Resolution (:mod:`.resolve`, live stacks walked by :mod:`.stack` and :mod:`.suits`), building
(:mod:`.build`), the multi-agent rollout verify and the audit compare (:mod:`.trace`) and the
env modules the audit walks (:mod:`.catalog`).
"""

from __future__ import annotations

import inspect
from typing import Any

import pettingzoo
from pettingzoo.utils.env import AECEnv, ParallelEnv

from ..._core._backends.recipe import Blueprint, PackLike
from ..._core._errors import BuildError, CaptureError
from . import build as _build
from . import catalog, trace
from . import resolve as _resolve

__all__ = ["BACKEND", "PettingZooBackend", "claims"]


def _owns(obj: Any) -> bool:
    """Whether ``obj`` is a live PettingZoo env or wrapper, or a registry spec."""
    spec_type = getattr(pettingzoo, "EnvSpec", None)
    return isinstance(obj, (AECEnv, ParallelEnv)) or (
        spec_type is not None and isinstance(obj, spec_type))


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


class PettingZooBackend:
    """The backend for PettingZoo envs (AEC and parallel) and SuperSuit's wrappers on them."""

    name = "pettingzoo"
    #: Libraries whose factories and classes are PettingZoo's (SuperSuit wraps PettingZoo envs).
    library_prefixes: tuple[str, ...] = ("pettingzoo.", "supersuit.")
    #: The multi-agent rollout recorder of verify and the audit, reached through the core's
    #: backend table (the tools never import the edge).
    tracer = trace
    env_modules = staticmethod(catalog.env_modules)
    owns = staticmethod(_owns)
    from_id = staticmethod(_resolve.from_id)
    from_spec = staticmethod(_resolve.from_spec)
    from_callable = staticmethod(_resolve.from_callable)
    from_env = staticmethod(_resolve.from_env)
    build = staticmethod(_build.build)

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
