"""SuperSuit: vectorise a PettingZoo pack so SuperSuit's workers build it from the pack (its
``concat_vec_envs_v1`` cloudpickles the env *instance*: that fails for a native handle, and
rebuilds an EzPickle env from its maybe partial record)."""

from __future__ import annotations

import functools
from typing import Any

from .._core._errors import BackendUnavailableError, SpecPackError
from .._core._keywords import check_flag

__all__ = ["supersuit_vec"]


def _markov(pack: Any, black_death: bool) -> Any:
    """SuperSuit's single-env vector env over ``pack.make()``, pickled as the pack."""
    try:
        from supersuit.vector import MarkovVectorEnv
    except ImportError as e:
        raise BackendUnavailableError(
            f"supersuit_vec needs SuperSuit, which is not installed here ({e}); install it "
            "with: pip install supersuit"
        ) from e

    env = pack.make()
    if not hasattr(env, "possible_agents") or not callable(getattr(env, "action_space", None)):
        raise SpecPackError(
            f"supersuit_vec: pack {pack.label} builds {type(env).__qualname__}, not a PettingZoo "
            "env; capture a PettingZoo parallel env"
        )
    from pettingzoo.utils.env import ParallelEnv

    if not isinstance(env, ParallelEnv):
        env.close()
        raise SpecPackError(
            f"supersuit_vec: pack {pack.label} builds an AEC env; SuperSuit vectorises parallel "
            "envs: capture the module's parallel_env, or aec_to_parallel(env) before capturing"
        )
    return _pack_vec_class(MarkovVectorEnv)(pack, env, black_death)


@functools.cache
def _pack_vec_class(base: type) -> type:
    """A subclass of SuperSuit's ``MarkovVectorEnv`` whose pickle is ``(pack, black_death)``."""

    class PackMarkovVectorEnv(base):  # type: ignore[misc, valid-type]
        """``MarkovVectorEnv(pack.make())`` that pickles as its pack."""

        def __init__(self, pack: Any, env: Any, black_death: bool) -> None:
            super().__init__(env, black_death=black_death)
            self._specpack = (pack, black_death)

        def __reduce__(self) -> tuple[Any, ...]:
            return (_markov, self._specpack)

    return PackMarkovVectorEnv


def supersuit_vec(pack: Any, n: int, num_cpus: int = 0, *, base_class: str = "gymnasium",
                  black_death: bool = False) -> Any:
    """``supersuit.concat_vec_envs_v1`` over copies of ``pack.make()``, built where they run.

    Parameters
    ----------
    pack
        A pack of a PettingZoo parallel env (every agent is one sub-env, as SuperSuit's
        ``pettingzoo_env_to_vec_env_v1`` makes it).
    n
        How many copies of the env (the vector env has ``n * len(possible_agents)`` sub-envs).
    num_cpus
        Worker processes (0 or 1: all in this process), as SuperSuit's ``num_cpus``.
    base_class
        ``"gymnasium"``, ``"stable_baselines3"`` or ``"stable_baselines"``, as SuperSuit takes it.
    black_death
        SuperSuit's ``black_death`` for envs whose agents leave before the episode ends.

    Returns
    -------
    Any
        SuperSuit's vector env; each worker unpickles the pack and calls ``pack.make()``.

    Raises
    ------
    SpecPackError
        ``n`` or ``num_cpus`` out of range, or the pack does not build a parallel env.
    BackendUnavailableError
        SuperSuit is not installed.
    """
    for name, value, low in (("n", n, 1), ("num_cpus", num_cpus, 0)):
        if type(value) is not int or value < low:
            raise SpecPackError(f"supersuit_vec: {name}={value!r} must be an int >= {low}")
    check_flag(black_death, "black_death", "supersuit_vec()")
    if not hasattr(pack, "make") or not hasattr(pack, "label"):
        raise SpecPackError(
            f"supersuit_vec takes a SpecPack (specpack.capture(...)), got {type(pack).__name__}"
        )
    markov = _markov(pack, black_death)
    from supersuit import concat_vec_envs_v1

    return concat_vec_envs_v1(markov, n, num_cpus=num_cpus, base_class=base_class)
