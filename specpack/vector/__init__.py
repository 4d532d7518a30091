"""Vector envs built from a pack: ``make_vec``, with fast forkserver starts and clear failures.

``make_vec(pack, n)`` is ``gymnasium.make_vec`` for a :class:`~specpack.SpecPack`: every
sub-env is ``pack.make()``, so a custom env registered in the main guard (or loaded from a file,
or defined in ``__main__``) works under spawn and forkserver workers, where an id-based
``gymnasium.make_vec`` fails with ``NameNotFound`` in the child and ``EOFError`` in the parent.

Three things it adds over ``AsyncVectorEnv([pack.make] * n)``:

* **Clear failures.** Each async worker reports back, over its own pipe from the same
  multiprocessing context, whether it could rebuild the pack. ``make_vec`` waits for every
  report (up to ``start_timeout``) before gymnasium's first exchange with the workers, so a
  constructor or an import that fails in a child surfaces in the parent as
  :class:`~specpack.WorkerError` with the child's message and traceback, not as a bare
  ``ConnectionResetError``/``EOFError``. The rebuild is the worker's real env (no extra verify).
* **Fast forkserver starts.** For ``context="forkserver"`` the modules the pack needs
  (gymnasium, numpy, cloudpickle, specpack and the entry point's importable modules, never
  ``__main__``) are added to the forkserver's preload list, merged with the list already set,
  so each worker forks with them loaded instead of importing them again. This only takes
  effect if the forkserver is not running yet (see ``docs/recipes/vector.md``);
  :func:`warm_forkserver` starts it early, in the background.
* **Seeding.** ``reset(seed=s)`` seeds sub-env ``i`` with ``s + i`` (gymnasium's convention);
  ``make_vec(..., seed=s)`` makes the first ``reset()`` without a seed behave as
  ``reset(seed=s)``.
"""

from __future__ import annotations

import inspect
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import multiprocessing.forkserver
import os
import pickle
import time
import traceback
from collections.abc import Iterable, Mapping
from typing import Any

import gymnasium
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

from ..carry.code import CodeRef
from ..carry.importable import fresh_importable
from ..errors import SpecPackError, WorkerError
from ..pack import SpecPack

__all__ = ["forkserver_modules", "make_vec", "warm_forkserver"]

#: Modules every forkserver worker of a pack needs, whatever the env.
_BASE_MODULES = (
    "numpy",
    "cloudpickle",
    "gymnasium",
    "gymnasium.vector.async_vector_env",
    "specpack",
    "specpack.pack",
    "specpack.vector",
    "specpack.backends.gymnasium",
    "specpack.versions",
)
_MAIN_NAMES = frozenset({"__main__", "__mp_main__"})
_MODES = ("async", "sync")


def make_vec(
    pack: SpecPack | Any,
    num_envs: int,
    vectorization_mode: str = "async",
    context: str | None = None,
    seed: int | None = None,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    preload: bool = True,
    start_timeout: float | None = 120.0,
    **vector_kwargs: Any,
) -> gymnasium.vector.VectorEnv:
    """Build a gymnasium vector env of ``num_envs`` copies of ``pack``.

    ``vectorization_mode`` is ``"async"`` (an ``AsyncVectorEnv``, one worker process per
    sub-env, started with the multiprocessing ``context``: ``"fork"``, ``"spawn"``,
    ``"forkserver"`` or ``None`` for the default) or ``"sync"`` (a ``SyncVectorEnv`` in this
    process). ``vector_kwargs`` go to the vector env class (``shared_memory``, ``daemon``,
    ``observation_mode``, ``autoreset_mode``, ...); ``env_kwargs`` are merged over the pack's
    kwargs for every sub-env, as in ``pack.make(**env_kwargs)``. ``pack`` may also be anything
    :func:`specpack.capture` takes (it is captured here, in the parent).

    Example::

        pack = specpack.capture("CustomAnt-v0")          # registered in the main guard
        venv = specpack.make_vec(pack, 8, context="forkserver", seed=0)
        obs, info = venv.reset()                         # sub-env i seeded with 0 + i

    Async workers report whether they could rebuild the pack; a worker that fails (or dies, or
    is still building after ``start_timeout`` seconds; ``None`` waits forever) makes
    ``make_vec`` stop all workers and raise :class:`~specpack.WorkerError` carrying the
    child's message and traceback (``.child_traceback``). ``preload=False`` leaves the
    forkserver's preload list alone.
    """
    pack = _as_pack(pack)
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise SpecPackError(f"make_vec: num_envs={num_envs!r} must be a positive int")
    mode = getattr(vectorization_mode, "value", vectorization_mode)
    if mode not in _MODES:
        raise SpecPackError(
            f"make_vec: vectorization_mode={vectorization_mode!r} is not supported; use "
            "'async' (worker processes) or 'sync' (this process)"
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise SpecPackError(f"make_vec: seed={seed!r} must be an int or None")
    extra = dict(env_kwargs or {})
    for k in extra:
        if not isinstance(k, str):
            raise SpecPackError(f"make_vec: env_kwargs names must be strings, got {k!r}")
    if mode == "sync":
        if context is not None:
            raise SpecPackError(
                f"make_vec: context={context!r} only applies to vectorization_mode='async'; "
                "drop it, or use the async mode"
            )
        _check_vector_kwargs(SyncVectorEnv, vector_kwargs, "sync")
        return _PackSyncVectorEnv(pack, num_envs, extra, seed, vector_kwargs)
    if context is not None:
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise SpecPackError(
                f"make_vec: context={context!r} is not a multiprocessing start method here; "
                f"use one of {', '.join(map(repr, methods))} or None"
            )
    _check_vector_kwargs(AsyncVectorEnv, vector_kwargs, "async")
    if start_timeout is not None and not start_timeout > 0:
        raise SpecPackError(
            f"make_vec: start_timeout={start_timeout!r} must be a positive number of seconds "
            "or None"
        )
    method = context or multiprocessing.get_start_method()
    if preload and method == "forkserver":
        _merge_forkserver_preload(forkserver_modules(pack))
    return _PackAsyncVectorEnv(
        pack, num_envs, extra, seed, context, start_timeout, vector_kwargs
    )


def forkserver_modules(*packs: SpecPack) -> list[str]:
    """The modules a forkserver should preload so that workers of ``packs`` start fast.

    gymnasium, numpy, cloudpickle and specpack's own build path, plus the modules of every
    piece of code the packs carry by reference (entry point, wrappers, callables in kwargs) that
    a fresh interpreter can import by name. Never ``__main__``, never code carried by value.
    """
    out = dict.fromkeys(_BASE_MODULES)
    for pack in packs:
        for item in pack.carried():
            if isinstance(item, CodeRef) and not item.by_value:
                mod = item.module
                if mod not in _MAIN_NAMES and fresh_importable(mod):
                    out[mod] = None
    return list(out)


def warm_forkserver(*packs: SpecPack, modules: Iterable[str] = ()) -> list[str]:
    """Start the forkserver now, preloading what ``packs`` need; return its preload list.

    The forkserver imports its preload list once, when it starts; the first forkserver
    ``make_vec`` of a process otherwise waits for that import. Call this early (for example
    before importing your learning library or building a model) and the import runs in the
    background meanwhile. ``modules`` adds more, e.g. ``["stable_baselines3"]`` so that SB3's
    ``SubprocVecEnv`` workers (forkserver by default) do not each import SB3 and torch::

        specpack.vector.warm_forkserver(pack, modules=["stable_baselines3"])

    The list is merged with the one already set (by you, or the default ``['__main__']``).
    If the forkserver is running already, nothing changes: it read its list when it started.
    """
    for m in modules:
        if not isinstance(m, str):
            raise SpecPackError(f"warm_forkserver: modules must be module names, got {m!r}")
    merged = _merge_forkserver_preload([*forkserver_modules(*packs), *modules])
    multiprocessing.forkserver.ensure_running()
    return merged


# -- internals -------------------------------------------------------------------------------


def _as_pack(obj: Any) -> SpecPack:
    if not isinstance(obj, SpecPack):
        from .._capture import capture

        obj = capture(obj)
    assert isinstance(obj, SpecPack)
    if obj.backend != "gymnasium":
        raise SpecPackError(
            f"make_vec builds gymnasium vector envs, but pack {obj.label} was captured with "
            f"backend={obj.backend!r}; for a legacy gym env use gym's own vector env, e.g. "
            "gym.vector.AsyncVectorEnv([pack.make] * n, context='spawn')"
        )
    return obj


def _check_vector_kwargs(cls: type, kwargs: Mapping[str, Any], mode: str) -> None:
    params = inspect.signature(cls).parameters
    allowed = [p for p in params if p not in ("env_fns", "context")]
    unknown = sorted(k for k in kwargs if k not in allowed)
    if unknown:
        raise SpecPackError(
            f"make_vec(vectorization_mode={mode!r}) got unknown vector_kwargs "
            f"{', '.join(map(repr, unknown))}; {cls.__name__} here takes "
            f"{', '.join(map(repr, allowed))} (env constructor kwargs go in env_kwargs=...)"
        )


def _forkserver_state() -> Any:
    return getattr(multiprocessing.forkserver, "_forkserver", None)


def _merge_forkserver_preload(modules: Iterable[str]) -> list[str]:
    """Add ``modules`` to the forkserver preload list, keeping what is there (and its order)."""
    state = _forkserver_state()
    current = getattr(state, "_preload_modules", None)
    existing = list(current) if isinstance(current, (list, tuple)) else ["__main__"]
    merged = list(dict.fromkeys([*existing, *(m for m in modules if m not in _MAIN_NAMES)]))
    if merged != existing:
        multiprocessing.get_context("forkserver").set_forkserver_preload(merged)
    return merged


class _SeedOnFirstReset:
    """Mixin: ``seed`` given to make_vec is used by the first ``reset`` that has none."""

    _pending_seed: int | None

    def _take_seed(self, seed: Any) -> Any:
        pending = self._pending_seed
        self._pending_seed = None
        return pending if seed is None else seed


class _PackSyncVectorEnv(_SeedOnFirstReset, SyncVectorEnv):
    """A ``SyncVectorEnv`` of ``pack.make()`` sub-envs (see :func:`make_vec`)."""

    def __init__(
        self,
        pack: SpecPack,
        num_envs: int,
        env_kwargs: dict[str, Any],
        seed: int | None,
        vector_kwargs: dict[str, Any],
    ) -> None:
        self.pack = pack
        self._pending_seed = seed
        fn = _BoundMake(pack, env_kwargs)
        super().__init__([fn] * num_envs, **vector_kwargs)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return super().reset(seed=self._take_seed(seed), options=options)


class _BoundMake:
    """``pack.make(**env_kwargs)`` as a picklable zero-argument callable."""

    def __init__(self, pack: SpecPack, env_kwargs: dict[str, Any]) -> None:
        self.pack = pack
        self.env_kwargs = env_kwargs

    def __call__(self) -> Any:
        return self.pack.make(**self.env_kwargs)


class _WorkerEnvFn:
    """The env factory each async worker runs: rebuild the pack, report the outcome.

    The pack travels as pickle bytes and is unpickled inside the reported ``try`` (so a
    failure to load it is reported too). The report pipe's write end travels through
    multiprocessing's own pickler while the worker is being started (a plain or cloudpickle
    dump could not carry a pipe into a spawn/forkserver child); under fork it is inherited.
    Called in the parent (gymnasium builds one env there to read the spaces) it just builds.
    """

    def __init__(
        self,
        blob: bytes,
        index: int,
        env_kwargs: dict[str, Any],
        writer: multiprocessing.connection.Connection | None,
        parent_pid: int,
        pack: SpecPack | None = None,
    ) -> None:
        self.blob = blob
        self.index = index
        self.env_kwargs = env_kwargs
        self.writer = writer
        self.parent_pid = parent_pid
        self._pack = pack  # the parent's own pack object (not pickled)

    def __reduce__(self) -> tuple[Any, ...]:
        channel = None
        if self.writer is not None and multiprocessing.context.get_spawning_popen() is not None:
            from multiprocessing.reduction import ForkingPickler

            channel = bytes(ForkingPickler.dumps(self.writer))
        return (_rebuild_env_fn, (self.blob, self.index, self.env_kwargs, channel,
                                  self.parent_pid))

    def __call__(self) -> Any:
        if os.getpid() == self.parent_pid:
            if self._pack is None:
                self._pack = pickle.loads(self.blob)
            return self._pack.make(**self.env_kwargs)
        try:
            pack: SpecPack = pickle.loads(self.blob)
            env = pack.make(**self.env_kwargs)
        except Exception as e:  # noqa: BLE001 - reported to the parent, which raises it
            self._report((self.index, False, f"{type(e).__name__}: {e}", traceback.format_exc()))
            # The parent raises WorkerError with this report; exit quietly (no second
            # traceback on stderr, whatever worker function runs us).
            raise SystemExit(1) from None
        self._report((self.index, True, "", ""))
        return env

    def _report(self, message: tuple[int, bool, str, str]) -> None:
        writer = self.writer
        if writer is None:
            return
        try:
            writer.send(message)
            writer.close()
        except OSError:  # the parent has gone; nothing to tell
            pass
        self.writer = None


def _rebuild_env_fn(
    blob: bytes, index: int, env_kwargs: dict[str, Any], channel: bytes | None, parent_pid: int
) -> _WorkerEnvFn:
    writer = pickle.loads(channel) if channel is not None else None
    return _WorkerEnvFn(blob, index, env_kwargs, writer, parent_pid)


def _exitcode(processes: list[Any], i: int) -> Any:
    if i >= len(processes):
        return None
    processes[i].join(1.0)
    return processes[i].exitcode


class _PackAsyncVectorEnv(_SeedOnFirstReset, AsyncVectorEnv):
    """An ``AsyncVectorEnv`` of ``pack.make()`` workers that report their start (see make_vec)."""

    def __init__(
        self,
        pack: SpecPack,
        num_envs: int,
        env_kwargs: dict[str, Any],
        seed: int | None,
        context: str | None,
        start_timeout: float | None,
        vector_kwargs: dict[str, Any],
    ) -> None:
        self.pack = pack
        self._pending_seed = seed
        self._start_timeout = start_timeout
        self._reports_done = False
        self._context_name = context
        ctx = multiprocessing.get_context(context)
        pipes = [ctx.Pipe(duplex=False) for _ in range(num_envs)]
        self._report_readers: list[multiprocessing.connection.Connection] = [r for r, _ in pipes]
        self._report_writers: list[multiprocessing.connection.Connection] = [w for _, w in pipes]
        blob = pickle.dumps(pack, protocol=pickle.HIGHEST_PROTOCOL)
        pid = os.getpid()
        fns = [
            _WorkerEnvFn(blob, i, env_kwargs, w, pid, pack)
            for i, w in enumerate(self._report_writers)
        ]
        try:
            super().__init__(fns, context=context, **vector_kwargs)
        except (EOFError, ConnectionError, BrokenPipeError) as e:
            # A gymnasium without the _check_spaces hook below: a worker died on us.
            if not self._reports_done:
                self._await_reports(cause=e)
            raise
        except BaseException:
            self._close_report_pipes()
            raise
        if not self._reports_done:  # pragma: no cover - gymnasium renamed _check_spaces
            self._await_reports()

    def _check_spaces(self) -> None:
        """Wait for every worker's report before gymnasium's first exchange with them."""
        if not self._reports_done:
            self._await_reports()
        super()._check_spaces()  # type: ignore[no-untyped-call]

    def reset_async(self, seed: Any = None, options: Any = None) -> None:
        super().reset_async(seed=self._take_seed(seed), options=options)

    def _await_reports(self, cause: BaseException | None = None) -> None:
        self._reports_done = True
        for w in self._report_writers:  # the workers are started: they hold their own ends
            w.close()
        processes: list[Any] = list(getattr(self, "processes", []))
        pending = {i: r for i, r in enumerate(self._report_readers)}
        sentinels = {i: p.sentinel for i, p in enumerate(processes)}
        deadline = None if self._start_timeout is None else time.monotonic() + self._start_timeout
        failures: list[tuple[int, str, str]] = []
        died: list[tuple[int, Any]] = []
        while pending:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            waitables: list[Any] = list(pending.values())
            waitables += [s for i, s in sentinels.items() if i in pending]
            ready = multiprocessing.connection.wait(waitables, remaining)
            if not ready:
                break
            for i in list(pending):
                reader = pending[i]
                if reader.poll():
                    try:
                        index, ok, msg, tb = reader.recv()
                    except (EOFError, OSError):
                        # Every write end is closed and nothing was sent: the worker is gone.
                        del pending[i]
                        died.append((i, _exitcode(processes, i)))
                        continue
                    del pending[i]
                    if not ok:
                        failures.append((index, msg, tb))
                elif i < len(processes) and processes[i].exitcode is not None:
                    del pending[i]
                    died.append((i, processes[i].exitcode))
            if failures or died:
                break
        self._close_report_pipes()
        if not failures and not died and not pending:
            return
        self._stop_workers()
        where = (
            f"make_vec({self.pack.label}, num_envs={self.num_envs}, "
            f"context={self._context_name!r})"
        )
        if failures:
            index, msg, tb = min(failures)
            others = len(failures) - 1
            more = f" ({others} more worker(s) failed the same way or otherwise)" if others else ""
            raise WorkerError(
                f"{where}: worker {index} could not build the env: {msg}{more}\n"
                f"Worker {index} traceback:\n{tb}",
                child_traceback=tb,
            ) from cause
        if died:
            index, code = min(died, key=lambda d: d[0])
            raise WorkerError(
                f"{where}: worker {index} exited with code {code} before building its env "
                "(killed, crashed, or could not unpickle its env factory: is specpack importable "
                "in the worker?); its stderr has the details",
            ) from cause
        stuck = ", ".join(str(i) for i in sorted(pending))
        raise WorkerError(
            f"{where}: worker(s) {stuck} did not finish building the env within "
            f"{self._start_timeout} s; a slow constructor needs a larger start_timeout=..., "
            "a hanging one needs fixing"
        ) from cause

    def _close_report_pipes(self) -> None:
        for c in (*self._report_writers, *self._report_readers):
            try:
                c.close()
            except OSError:  # pragma: no cover
                pass

    def _stop_workers(self) -> None:
        """Terminate every worker and release gymnasium's resources, without raising."""
        try:
            self.close(terminate=True)
        except Exception:  # noqa: BLE001 - cleaning up after a failure being raised already
            for p in getattr(self, "processes", []):
                if p.is_alive():
                    p.kill()

