"""The vector envs ``make_vec`` returns: every sub-env is ``pack.make()``; async workers report.

Each async worker reports back, over its own pipe from the same multiprocessing context,
whether it could rebuild the pack. The vector env waits for every report (up to
``start_timeout``) before gymnasium's first exchange with the workers, so a constructor or an
import that fails in a child surfaces in the parent as :class:`~specpack.WorkerError` with the
child's message and traceback, not as a bare ``ConnectionResetError``/``EOFError``.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import os
import pickle
import time
import traceback
from typing import Any

from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

from .._surface import SurfaceEnv
from ..errors import WorkerError
from ..pack import SpecPack

__all__ = ["PackAsyncVectorEnv", "PackSyncVectorEnv"]


class _SeedOnFirstReset:
    """Mixin: ``seed`` given to make_vec is used by the first ``reset`` that has none."""

    _pending_seed: int | None

    def _take_seed(self, seed: Any) -> Any:
        pending = self._pending_seed
        self._pending_seed = None
        return pending if seed is None else seed


class PackSyncVectorEnv(_SeedOnFirstReset, SyncVectorEnv):
    """A ``SyncVectorEnv`` of ``pack.make()`` sub-envs (see :func:`make_vec`)."""

    def __init__(
        self,
        pack: SpecPack,
        num_envs: int,
        env_kwargs: list[dict[str, Any]],
        seed: int | None,
        vector_kwargs: dict[str, Any],
    ) -> None:
        self.pack = pack
        self._pending_seed = seed
        super().__init__([_BoundMake(pack, kw) for kw in env_kwargs], **vector_kwargs)

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
    Called in the parent (gymnasium builds one env there to read the spaces) it returns a
    :class:`~specpack._surface.SurfaceEnv` when the pack recorded its spaces, else it builds.
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
            # gymnasium builds env_fns[0]() in the parent only to read the spaces: a pack
            # that recorded them answers without building anything here.
            mine: SpecPack = self._pack if self._pack is not None else pickle.loads(self.blob)
            self._pack = mine
            if mine.surface is not None and not self.env_kwargs:
                # (kwargs of its own may change the spaces: then it builds, as gymnasium does)
                return SurfaceEnv(mine.surface)
            return mine.make(**self.env_kwargs)
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


class PackAsyncVectorEnv(_SeedOnFirstReset, AsyncVectorEnv):
    """An ``AsyncVectorEnv`` of ``pack.make()`` workers that report their start (see make_vec)."""

    def __init__(
        self,
        pack: SpecPack,
        num_envs: int,
        env_kwargs: list[dict[str, Any]],
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
            _WorkerEnvFn(blob, i, env_kwargs[i], w, pid, pack)
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

