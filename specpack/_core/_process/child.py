"""The child side of the worker protocol: read a task, run its job, answer on the channel.

One loop (:func:`serve`) for every start method; :func:`main` (a fresh ``python -c``),
:func:`mp_main` (spawn/forkserver) and :func:`fork_main` differ in how the pipes arrive. While a
job runs, fds 1 and 2 point at the task's capture files; the answer channel is close-on-exec
and closed in any process the job forks, so neither a print nor a grandchild can write to it.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import importlib
import io
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NoReturn

from .._text import format_exception, one_line
from .protocol import FrameReader, ProtocolError, pack_frame, read_request
from .tree import become_subreaper, close_fds, hard_exit, kill_tree, reaper_above

__all__ = ["FDS_VARIABLE", "captured", "fork_main", "load_job", "main", "mp_main", "run_job",
           "serve"]

#: The environment variable that gives a fresh interpreter its pipe fds (``"CTL,RES"``).
FDS_VARIABLE = "SPECPACK_WORKER_FDS"


def load_job(job: str) -> Callable[..., Any]:
    """The function named ``"package.module:qualname"`` (imported here, in the child)."""
    module, sep, qualname = job.partition(":")
    if not sep or not module or not qualname:
        raise ValueError(f"job {job!r} is not of the form 'package.module:function'")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"job {job!r} is not callable")
    return obj  # type: ignore[no-any-return]


def run_job(job: str, payload: bytes, params: Mapping[str, Any]) -> dict[str, Any]:
    """Run one job; its result (not encoded yet) or its exception as an answer (never raises)."""
    try:
        return {"status": "ok", "value": load_job(job)(payload, **params)}
    except BaseException as e:  # noqa: BLE001 - everything goes back to the parent
        return _error_answer(e)


def _error_answer(e: BaseException) -> dict[str, Any]:
    try:
        return {"status": "error", "error": one_line(e), "detail": format_exception(e)}
    except BaseException:  # noqa: BLE001 - a __str__ that raises
        name = type(e).__name__
        return {"status": "error", "error": name, "detail": name}


@contextlib.contextmanager
def captured(stdout_path: str, stderr_path: str) -> Iterator[None]:
    """Point fds 1 and 2 (and fresh sys.stdout/sys.stderr on them) at the capture files; streams
    holding the old fds (``sys.__stdout__``, a logging handler's) are flushed into them too."""
    olds = (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)
    for stream in olds:
        with contextlib.suppress(Exception):
            stream.flush()  # type: ignore[union-attr]
    saved = (os.dup(1), os.dup(2))
    try:
        _redirect(1, stdout_path, os.O_TRUNC)
        _redirect(2, stderr_path, os.O_TRUNC)
        sys.stdout = _stream(1)
        sys.stderr = _stream(2)
        yield
    finally:
        for stream in (sys.stdout, sys.stderr, *olds):
            with contextlib.suppress(Exception):
                stream.flush()  # type: ignore[union-attr]
        sys.stdout, sys.stderr = olds[:2]
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)


def _redirect(fd: int, path: str, mode: int) -> None:
    target = os.open(path, os.O_WRONLY | os.O_CREAT | mode, 0o600)
    os.dup2(target, fd)
    os.close(target)


def _stream(fd: int) -> io.TextIOWrapper:
    return io.TextIOWrapper(open(fd, "wb", buffering=0, closefd=False), encoding="utf-8",
                            errors="backslashreplace", write_through=True)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_message(fd: int, reader: FrameReader) -> dict[str, Any] | None:
    while (message := reader.next()) is None:
        chunk = os.read(fd, 65536)  # retried on EINTR by Python itself (PEP 475)
        if not chunk:
            return None
        reader.feed(chunk)
    return message


def _guard_channels(fds: tuple[int, ...]) -> None:
    """Keep the protocol pipes out of anything the job execs or forks."""
    for fd in fds:
        os.set_inheritable(fd, False)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=lambda: close_fds(fds))


def _end_tree_below() -> None:
    """Kill every process the jobs left below this worker."""
    with contextlib.suppress(Exception):
        kill_tree(os.getpid(), include_root=False)


def _watch_parent() -> None:
    """Kill this worker's process tree when the parent process goes away."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                _end_tree_below()
                with contextlib.suppress(Exception):
                    if os.getpgrp() == os.getpid():
                        os.killpg(os.getpid(), signal.SIGKILL)
                hard_exit(1)

    threading.Thread(target=watch, name="specpack-parent-watch", daemon=True).start()


def serve(ctl_fd: int, res_fd: int, reaper: bool = True) -> None:
    """The worker loop: one task at a time until told to stop or the parent goes away; on
    Linux the calling process stays above as the reaper (:func:`.tree.reaper_above`), unless
    ``reaper`` is false: one is there already."""
    if reaper:
        reaper_above(close=(ctl_fd, res_fd))
    become_subreaper()
    _end_tree_at_exit()
    try:
        _guard_channels((ctl_fd, res_fd))
        with contextlib.suppress(Exception):
            # disable first: enable() on an enabled handler keeps its old signal handlers, which
            # a library (Ray's core) may have replaced; a fork child would then die without a word
            faulthandler.disable()
            faulthandler.enable(file=2, all_threads=False)  # fd 2: the task's capture file
        _watch_parent()
        reader = FrameReader("the parent")
        first = _read_message(ctl_fd, reader)  # the answer channel's key
        if first is None:
            raise ProtocolError("the parent closed the control pipe before sending the key")
        if first.get("op") != "key" or not isinstance(first.get("key"), str):
            raise ProtocolError("the parent's first control message is not the key")
        key = bytes.fromhex(first["key"])
        while (message := _read_message(ctl_fd, reader)) and message.get("op") == "task":
            _run_task(message, res_fd, key)
    finally:
        _end_tree_below()


def _end_tree_at_exit() -> None:
    """Make ``os._exit`` in this process (a job that calls it) kill the tree below it first
    (a process the job forks inherits the wrapper, and just exits)."""
    me, real_exit = os.getpid(), os._exit

    def exit_after_the_tree(code: int) -> NoReturn:
        if os.getpid() == me:
            _end_tree_below()
        real_exit(code)

    setattr(os, "_exit", exit_after_the_tree)  # noqa: B010 - mypy refuses assigning a function


def _run_task(message: dict[str, Any], res_fd: int, key: bytes) -> None:
    task, path = message.get("task"), str(message.get("request"))
    try:
        header, payload = read_request(path)
    except BaseException as e:  # noqa: BLE001
        _write_all(res_fd, pack_frame({"task": task, **_error_answer(e)}, key))
        return
    with contextlib.suppress(OSError):
        os.remove(path)  # its absence tells the parent the task started
    with captured(str(header["stdout"]), str(header["stderr"])):
        answer = run_job(str(header["job"]), payload, header.get("params") or {})
    try:
        frame = pack_frame({"task": task, **answer}, key)
    except BaseException as e:  # noqa: BLE001 - e.g. a value typed JSON cannot carry
        why = _error_answer(e)
        frame = pack_frame({"task": task, "status": "error",
                            "error": "SpecPackError: the job's result cannot be sent back as "
                                     f"typed JSON ({why['error']})",
                            "detail": why["detail"]}, key)
    _write_all(res_fd, frame)


def main(reaper: bool = True) -> None:
    """Entry point of a fresh interpreter (fds in :data:`FDS_VARIABLE`, deleted before any job;
    ``reaper``: see :func:`serve`).
    It ends as the interpreter's exit would, minus the teardown that cost each of verify's fresh
    interpreters ~80 ms of CPU for nothing anyone reads (a loop that raised ends the usual way)."""
    ctl, res = os.environ.pop(FDS_VARIABLE).split(",")
    serve(int(ctl), int(res), reaper)
    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    hard_exit(0)


def _settle(boot_out: str, boot_err: str, cwd: str | None, env: Mapping[str, str] | None) -> None:
    """Own process group, boot logs on fds 1/2, working directory and environment."""
    with contextlib.suppress(OSError, AttributeError):  # already a leader / not POSIX
        os.setsid()
    _redirect(1, boot_out, os.O_APPEND)
    _redirect(2, boot_err, os.O_APPEND)
    if cwd is not None:
        os.chdir(cwd)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)


def mp_main(ctl: Any, res: Any, boot_out: str, boot_err: str, cwd: str | None,
            env: Mapping[str, str] | None, exit_handlers: bool = False) -> None:
    """multiprocessing target (spawn/forkserver; ``ctl``/``res`` are Connections). It ends by
    :func:`.tree.hard_exit` (after the ``atexit`` handlers with ``exit_handlers``): the
    ``os._exit`` of multiprocessing, wrapped by something that raises, would unwind into a
    forkserver's loop."""
    code = 1
    try:
        _settle(boot_out, boot_err, cwd, env)
        serve(ctl.fileno(), res.fileno())
        code = 0
    except BaseException as e:  # noqa: BLE001 - the boot log says why; the parent sees it died
        with contextlib.suppress(BaseException):
            os.write(2, format_exception(e).encode("utf-8", "replace"))
    finally:
        with contextlib.suppress(BaseException):
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            if exit_handlers:
                atexit._run_exitfuncs()
        hard_exit(code)


def fork_main(ctl_fd: int, res_fd: int, boot_out: str, boot_err: str, cwd: str | None,
              env: Mapping[str, str] | None) -> None:
    """Body of a fork child (:func:`.tree.fork_call` ends the process after it returns)."""
    _settle(boot_out, boot_err, cwd, env)
    serve(ctl_fd, res_fd)
