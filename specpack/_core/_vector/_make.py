"""``make_vec``: ``gymnasium.make_vec`` for a :class:`~specpack.SpecPack`, whose sub-envs are
``pack.make()``, so that spawn and forkserver workers build what an id-based ``make_vec`` could
not find there (``NameNotFound`` in the child, ``EOFError`` in the parent)."""

from __future__ import annotations

import ast
import inspect
import multiprocessing
import multiprocessing.forkserver
import sys
import tokenize
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._backends.gymnasium.compat import LINE

if TYPE_CHECKING or LINE != "0":
    from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv, VectorEnv, VectorWrapper
else:  # gymnasium 0.28/0.29: the 1.x vector API is gymnasium.experimental.vector
    from gymnasium.experimental.vector import (
        AsyncVectorEnv,
        SyncVectorEnv,
        VectorEnv,
        VectorWrapper,
    )

from .._backends import with_trait
from .._blas import children_spin_briefly
from .._capture import capture
from .._errors import SpecPackError, UnknownKeywordError, WorkerError
from .._keywords import check_flag
from .._pack import SpecPack
from .._text import unexpected_keywords
from ._envs import PackAsyncVectorEnv, PackSyncVectorEnv, SeedOnFirstReset
from ._forkserver import forkserver_modules, merge_forkserver_preload

__all__ = ["make_vec"]

#: ``env_kwargs`` of make_vec: for every sub-env, per sub-env, or a function of the index.
EnvKwargs = Mapping[str, Any] | Sequence[Mapping[str, Any]] | Callable[[int], Mapping[str, Any]]
#: How to fix a script that starts workers from its top level under spawn or forkserver.
_GUARD_FIX = (
    "a spawn or forkserver worker imports the main script again, so a script that starts "
    "workers outside an 'if __name__ == \"__main__\":' guard makes every worker try to start "
    "its own and die (\"An attempt has been made to start a new process before the current "
    "process has finished its bootstrapping phase\"). Put the code that makes and runs the "
    "envs under 'if __name__ == \"__main__\":' (capturing there too), or use context='fork'")


def make_vec(
    pack: SpecPack | Any,
    num_envs: int,
    vectorization_mode: str | None = None,
    context: str | None = None,
    seed: int | None = None,
    *,
    env_kwargs: EnvKwargs | None = None,
    preload: bool = True,
    start_timeout: float | None = 120.0,
    **vector_kwargs: Any,
) -> VectorEnv:
    """Build a gymnasium vector env of ``num_envs`` copies of ``pack``.

    Every sub-env is ``pack.make()``, so an env registered in the main guard, loaded from a file
    or defined in ``__main__`` works in spawn and forkserver workers. A pack that recorded its
    spaces (``capture(..., record_spaces=True)``, or a live env) builds no env in this process.

    Parameters
    ----------
    pack
        The pack, or anything :func:`specpack.capture` takes (captured here, in the parent).
    num_envs
        How many sub-envs.
    vectorization_mode
        ``"async"`` (the default: one worker process per sub-env) or ``"sync"`` (this
        process); a vector-only pack uses its vector creator (``"vector_entry_point"``).
    context
        The async workers' multiprocessing start method (``"fork"``, ``"spawn"``,
        ``"forkserver"``; ``None``: the default).
    seed
        The first ``reset()`` without a seed behaves as ``reset(seed=seed)`` (sub-env ``i``
        gets ``seed + i``).
    env_kwargs
        Merged over the pack's kwargs, as in ``pack.make(**env_kwargs)``: one mapping for all,
        a list of ``num_envs`` mappings, or a function of the sub-env index returning one.
    preload
        For forkserver: add the modules the pack needs to the forkserver's preload list.
    start_timeout
        Seconds to wait for every async worker to report its build (``None``: forever).
    **vector_kwargs
        Passed to the vector env class (``shared_memory``, ``daemon``, ``autoreset_mode``...).

    Returns
    -------
    gymnasium.vector.VectorEnv
        The vector env.

    Raises
    ------
    WorkerError
        An async worker could not build its env, died, or did not report within
        ``start_timeout`` (with the child's message and ``.child_traceback``).
    SpecPackError
        Bad options (named with the fix).

    Example::

        pack = specpack.capture("CustomAnt-v0")          # registered in the main guard
        venv = specpack.make_vec(pack, 8, context="forkserver", seed=0)
        obs, info = venv.reset()                         # sub-env i seeded with 0 + i
    """
    if getattr(multiprocessing.process.current_process(), "_inheriting", False):
        raise SpecPackError(f"make_vec was called while this process was starting as a worker "
                            f"of another one: {_GUARD_FIX}")
    check_flag(preload, "preload", "specpack.make_vec()")
    pack = _as_pack(pack)
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise SpecPackError(f"make_vec: num_envs={num_envs!r} must be a positive int")
    mode = getattr(vectorization_mode, "value", vectorization_mode)
    if pack.vector:
        return _vector_only(pack, num_envs, mode, context, seed, env_kwargs, vector_kwargs)
    if mode is None:
        mode = "async"
    if mode not in ("async", "sync"):
        raise SpecPackError(
            f"make_vec: vectorization_mode={vectorization_mode!r} is not supported; use "
            "'async' (worker processes) or 'sync' (this process)")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise SpecPackError(f"make_vec: seed={seed!r} must be an int or None")
    extra = per_env_kwargs(env_kwargs, num_envs)
    if mode == "sync":
        if context is not None:
            raise SpecPackError(
                f"make_vec: context={context!r} only applies to vectorization_mode='async'; "
                "drop it, or use the async mode")
        _check_vector_kwargs(SyncVectorEnv, vector_kwargs, "sync")
        return PackSyncVectorEnv(pack, num_envs, extra, seed, vector_kwargs)
    if context is not None:
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise SpecPackError(
                f"make_vec: context={context!r} is not a multiprocessing start method here; "
                f"use one of {', '.join(map(repr, methods))} or None")
    _check_vector_kwargs(AsyncVectorEnv, vector_kwargs, "async")
    if start_timeout is not None and not start_timeout > 0:
        raise SpecPackError(
            f"make_vec: start_timeout={start_timeout!r} must be a positive number of seconds "
            "or None")
    method = context or multiprocessing.get_start_method()
    if method == "forkserver":
        if preload:
            merge_forkserver_preload(forkserver_modules(pack))
        # Started now, not at the first worker's start: its start and preload imports overlap
        # this process's set-up (pipes, factories, the parent's view of the spaces).
        with children_spin_briefly():  # the server is a fresh interpreter that loads numpy
            multiprocessing.forkserver.ensure_running()
    try:
        return PackAsyncVectorEnv(pack, num_envs, extra, seed, context, start_timeout,
                                  vector_kwargs)
    except WorkerError as e:
        # A worker that died before it could report: a script that starts workers outside a
        # main guard is why, when this runs at its top level (see _GUARD_FIX).
        where = None if e.child_traceback or method not in ("spawn", "forkserver") else (
            unguarded_main_call())
        if where is None:
            raise
        raise WorkerError(f"{e}. Most likely cause: {where} {_GUARD_FIX}") from e.__cause__


def unguarded_main_call() -> str | None:
    """Where this call runs at the main script's top level outside a main guard, as text;
    None when it does not or the script cannot be read (an interactive session, ``-c``)."""
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_code.co_name == "<module>"
                                     and frame.f_globals.get("__name__") == "__main__"):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None
    path = frame.f_globals.get("__file__")
    line = frame.f_lineno
    if not isinstance(path, str) or line is None:
        return None
    try:
        with tokenize.open(path) as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None
    for node in tree.body:
        if (isinstance(node, ast.If) and _is_main_test(node.test)
                and node.lineno <= line <= (node.end_lineno or node.lineno)):
            return None
    return (f"the script {path} calls make_vec at line {line}, outside an 'if __name__ == "
            "\"__main__\":' guard:")


def _is_main_test(test: Any) -> bool:
    """Whether ``test`` is ``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1


def per_env_kwargs(env_kwargs: EnvKwargs | None, num_envs: int) -> list[dict[str, Any]]:
    """``env_kwargs`` as one dict per sub-env, checked here in the parent."""
    if env_kwargs is None or isinstance(env_kwargs, Mapping):
        out: list[Any] = [{} if env_kwargs is None else env_kwargs] * num_envs
    elif callable(env_kwargs):
        out = []
        for i in range(num_envs):
            try:
                out.append(env_kwargs(i))
            except Exception as e:
                raise SpecPackError(
                    f"make_vec: env_kwargs({i}) raised {type(e).__name__}: {e}") from e
    elif isinstance(env_kwargs, Sequence) and not isinstance(env_kwargs, (str, bytes)):
        out = list(env_kwargs)
        if len(out) != num_envs:
            raise SpecPackError(
                f"make_vec: env_kwargs has {len(out)} entries for num_envs={num_envs}; give one "
                "mapping per sub-env, one mapping for all, or a function of the index")
    else:
        raise SpecPackError(
            f"make_vec: env_kwargs={env_kwargs!r} must be a mapping, a list of mappings or a "
            "function of the sub-env index")
    for i, kw in enumerate(out):
        if not isinstance(kw, Mapping):
            raise SpecPackError(f"make_vec: env_kwargs for sub-env {i} is "
                                f"{type(kw).__name__}, not a mapping")
        for k in kw:
            if not isinstance(k, str):
                raise SpecPackError(f"make_vec: env_kwargs names must be strings, got {k!r}")
    return [dict(kw) for kw in out]


def _vector_only(pack: SpecPack, num_envs: int, mode: Any, context: str | None,
                 seed: int | None, env_kwargs: EnvKwargs | None,
                 vector_kwargs: Mapping[str, Any]) -> VectorEnv:
    """A vector-only pack: its vector creator builds all ``num_envs`` (``vector_entry_point``)."""
    if mode not in (None, "vector_entry_point"):
        raise SpecPackError(
            f"make_vec: pack {pack.label} is vector-only (its spec has only a "
            f"vector_entry_point), so vectorization_mode={mode!r} has no single env to copy; "
            "leave vectorization_mode unset (or 'vector_entry_point')")
    if context is not None or vector_kwargs:
        raise SpecPackError(
            f"make_vec: pack {pack.label} is vector-only; its vector creator takes kwargs only "
            "(env_kwargs=...), not context= or vector kwargs "
            f"({', '.join(sorted(vector_kwargs)) or 'context'})")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise SpecPackError(f"make_vec: seed={seed!r} must be an int or None")
    if env_kwargs is not None and not isinstance(env_kwargs, Mapping):
        raise SpecPackError(f"make_vec: pack {pack.label} is vector-only; its creator takes one "
                            "set of kwargs (env_kwargs as one mapping)")
    env = pack._make_vector(num_envs, dict(env_kwargs or {}))
    return _SeededVectorOnly(env, seed) if seed is not None else env


class _SeededVectorOnly(SeedOnFirstReset, VectorWrapper):
    """``make_vec(..., seed=s)`` for a vector-only pack: the first unseeded reset uses ``s``."""

    def __init__(self, env: VectorEnv, seed: int) -> None:
        super().__init__(env)
        self._pending_seed = seed

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return self.env.reset(seed=self._take_seed(seed), options=options)


def _as_pack(obj: Any) -> SpecPack:
    pack = obj if isinstance(obj, SpecPack) else capture(obj)
    if pack.backend in with_trait("multi_agent"):
        raise SpecPackError(
            f"make_vec builds gymnasium vector envs, but pack {pack.label} is a PettingZoo env; "
            "use specpack.adapters.supersuit_vec(pack, num_envs, num_cpus) for SuperSuit's "
            "vector envs")
    if pack.backend not in with_trait("vector"):
        raise SpecPackError(
            f"make_vec builds gymnasium vector envs, but pack {pack.label} was captured with "
            f"backend={pack.backend!r}; for a legacy gym env use gym's own vector env, e.g. "
            "gym.vector.AsyncVectorEnv([pack.make] * n, context='spawn')")
    return pack


def _check_vector_kwargs(cls: type, kwargs: Mapping[str, Any], mode: str) -> None:
    """Refuse a vector kwarg ``cls`` does not take, suggesting the closest of its and make_vec's."""
    params = inspect.signature(cls).parameters
    allowed = [p for p in params if p not in ("env_fns", "context")]
    unknown = sorted(k for k in kwargs if k not in allowed)
    if unknown:
        own = [p for p in inspect.signature(make_vec).parameters if p != "vector_kwargs"]
        raise UnknownKeywordError(
            unexpected_keywords(f"make_vec(vectorization_mode={mode!r})", unknown, allowed,
                                kinds={p: "make_vec's parameter" for p in own})
            + f" (the vector kwargs of {cls.__name__} here; env constructor kwargs go in "
            "env_kwargs=...)")
