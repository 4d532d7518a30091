"""The vector envs ``make_vec`` returns. Each async worker reports over its own pipe whether
it could build, and the env waits for every report before gymnasium's first exchange with the
workers: a child's failure is a :class:`~specpack.WorkerError`, not a bare ``EOFError``."""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import time
from typing import TYPE_CHECKING, Any

from .._backends.gymnasium.compat import LINE

if TYPE_CHECKING or LINE != "0":
    from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv
else:  # gymnasium 0.28/0.29: the 1.x vector API is gymnasium.experimental.vector
    from gymnasium.experimental.vector import AsyncVectorEnv, SyncVectorEnv

from .._blas import children_spin_briefly
from .._errors import WorkerError
from .._pack import SpecPack

# Loaded with make_vec, not at its first start: gymnasium reads the spaces from one factory in
# the parent, which answers with the parent's view (a worker never loads it).
from . import _view  # noqa: F401
from ._factory import WorkerEnvFn, order_blob

__all__ = ["PackAsyncVectorEnv", "PackSyncVectorEnv"]


class SeedOnFirstReset:
    """Mixin: the ``seed`` given to make_vec is used by the first ``reset`` that has none."""

    _pending_seed: int | None

    def _take_seed(self, seed: Any) -> Any:
        """``seed``, or the pending one (once) when ``seed`` is None."""
        pending = self._pending_seed
        self._pending_seed = None
        return pending if seed is None else seed


class PackSyncVectorEnv(SeedOnFirstReset, SyncVectorEnv):
    """A ``SyncVectorEnv`` of ``pack.make()`` sub-envs (see :func:`make_vec`)."""

    def __init__(self, pack: SpecPack, num_envs: int, env_kwargs: list[dict[str, Any]],
                 seed: int | None, vector_kwargs: dict[str, Any]) -> None:
        self.pack = pack
        self._pending_seed = seed
        super().__init__([WorkerEnvFn(pack, kw).build for kw in env_kwargs], **vector_kwargs)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return super().reset(seed=self._take_seed(seed), options=options)


class _ReportsFirst:
    """A worker's command pipe whose first read waits for every worker's start report."""

    __slots__ = ("_pipe", "_venv")

    def __init__(self, pipe: Any, venv: PackAsyncVectorEnv) -> None:
        self._pipe = pipe
        self._venv = venv

    def recv(self) -> Any:
        """The pipe's next message, once every worker has reported its start."""
        if not self._venv._reports_done:
            self._venv._await_reports()
        return self._pipe.recv()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pipe, name)


def _exitcode(processes: list[Any], i: int) -> Any:
    if i >= len(processes):
        return None
    processes[i].join(1.0)
    return processes[i].exitcode


class PackAsyncVectorEnv(SeedOnFirstReset, AsyncVectorEnv):
    """An ``AsyncVectorEnv`` of ``pack.make()`` workers that report their start (see make_vec)."""

    def __init__(self, pack: SpecPack, num_envs: int, env_kwargs: list[dict[str, Any]],
                 seed: int | None, context: str | None, start_timeout: float | None,
                 vector_kwargs: dict[str, Any]) -> None:
        self.pack = pack
        self._pending_seed = seed
        self._start_timeout = start_timeout
        self._reports_done = False
        self._context_name = context
        ctx = multiprocessing.get_context(context)
        pipes = [ctx.Pipe(duplex=False) for _ in range(num_envs)]
        self._report_readers: list[multiprocessing.connection.Connection] = [r for r, _ in pipes]
        self._report_writers: list[multiprocessing.connection.Connection] = [w for _, w in pipes]
        # A fork worker inherits this process (its factory, its environment): the build order
        # is pickled (once) only for the other start methods.
        inherits = ctx.get_start_method() == "fork"
        blob = None if inherits else order_blob(pack)
        fns = [WorkerEnvFn(pack, env_kwargs[i], report=(i, w), blob=blob)
               for i, w in enumerate(self._report_writers)]
        # A spawn worker is a fresh interpreter: a short BLAS spin (see .._blas), as verify's,
        # in this process's environment only while gymnasium starts the workers (it ends at
        # gymnasium's first exchange with them, _check_spaces, which waits for their builds).
        self._starting = contextlib.ExitStack()
        if not inherits:
            self._starting.enter_context(children_spin_briefly())
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
        finally:
            self._starting.close()
        if not self._reports_done:  # pragma: no cover - gymnasium renamed _check_spaces
            self._await_reports()

    def _check_spaces(self) -> None:
        """gymnasium's first exchange with the workers, whose first read waits for every
        report (:class:`_ReportsFirst`): a failed or hanging worker is reported as before the
        exchange, and a start costs no extra round trip."""
        self._starting.close()  # every worker is started
        if self._reports_done:
            super()._check_spaces()  # type: ignore[no-untyped-call]
            return
        pipes = self.parent_pipes
        self.parent_pipes = [_ReportsFirst(pipe, self) for pipe in pipes]  # type: ignore[misc]
        try:
            super()._check_spaces()  # type: ignore[no-untyped-call]
        except (EOFError, ConnectionError, BrokenPipeError) as e:  # a send to a dead worker
            if not self._reports_done:
                self._await_reports(cause=e)
            raise
        finally:
            self.parent_pipes = pipes

    def reset_async(self, seed: Any = None, options: Any = None) -> None:
        super().reset_async(seed=self._take_seed(seed), options=options)

    def _await_reports(self, cause: BaseException | None = None) -> None:
        self._reports_done = True
        for w in self._report_writers:  # the workers are started: they hold their own ends
            w.close()
        processes: list[Any] = list(getattr(self, "processes", []))
        pending = dict(enumerate(self._report_readers))
        deadline = None if self._start_timeout is None else time.monotonic() + self._start_timeout
        failures: list[tuple[int, str, str]] = []
        died: list[tuple[int, Any]] = []
        while pending and not (failures or died):
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            sentinels = [processes[i].sentinel for i in pending if i < len(processes)]
            if not multiprocessing.connection.wait([*pending.values(), *sentinels], remaining):
                break
            for i, reader in list(pending.items()):
                if reader.poll():
                    del pending[i]
                    try:
                        index, ok, msg, tb = reader.recv()
                    except (EOFError, OSError):  # every write end closed, nothing sent: gone
                        died.append((i, _exitcode(processes, i)))
                        continue
                    if not ok:
                        failures.append((index, msg, tb))
                elif i < len(processes) and processes[i].exitcode is not None:
                    del pending[i]
                    died.append((i, processes[i].exitcode))
        self._close_report_pipes()
        if not failures and not died and not pending:
            return
        self._stop_workers()
        where = (f"make_vec({self.pack.label}, num_envs={self.num_envs}, "
                 f"context={self._context_name!r})")
        if failures:
            index, msg, tb = min(failures)
            others = len(failures) - 1
            more = f" ({others} more worker(s) failed the same way or otherwise)" if others else ""
            raise WorkerError(
                f"{where}: worker {index} could not build the env: {msg}{more}\n"
                f"Worker {index} traceback:\n{tb}",
                child_traceback=tb) from cause
        if died:
            index, code = min(died)
            raise WorkerError(
                f"{where}: worker {index} exited with code {code} before building its env "
                "(killed, crashed, or could not unpickle its env factory: is specpack importable "
                "in the worker?); its stderr has the details") from cause
        stuck = ", ".join(str(i) for i in sorted(pending))
        raise WorkerError(
            f"{where}: worker(s) {stuck} did not finish building the env within "
            f"{self._start_timeout} s; a slow constructor needs a larger start_timeout=..., "
            "a hanging one needs fixing") from cause

    def _close_report_pipes(self) -> None:
        for c in (*self._report_writers, *self._report_readers):
            with contextlib.suppress(OSError):
                c.close()

    def _stop_workers(self) -> None:
        """Terminate every worker and release gymnasium's resources, without raising."""
        try:
            self.close(terminate=True)
        except Exception:  # noqa: BLE001 - cleaning up after a failure being raised already
            for p in getattr(self, "processes", []):
                if p.is_alive():
                    p.kill()

