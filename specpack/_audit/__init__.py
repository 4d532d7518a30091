"""``specpack audit``: find every env and wrapper of a registry that does not survive a process.

For each selected env the audit does what a user's worker would: it captures the env here
(``specpack.capture(id)``), builds a reference here and records its trace, sends the pickled
pack to a *fresh* long-lived worker process that never ran this process's imports or
registration code, rebuilds it there and compares the two traces as ``verify()`` does (spaces,
layer list, ``render_mode``, spec fields, a seeded rollout). It also checks what the env itself
records about its constructor arguments: the EzPickle record against the kwargs ``make``
passed (the gap that once dropped Atari's ``frameskip``), and, by capturing the live instance,
every ``RecordConstructorArgs`` wrapper in its stack. Each env gets exactly one status::

    identical            the rebuild in a fresh worker is the same env
    not_identical        something differs (the first difference is the reason)
    capture_error        it cannot be captured or built here, where it is registered
    rebuild_error        the fresh worker could not rebuild it (its traceback is the detail)
    missing_dependency   skipped: a package it needs is not installed (the package is named)
    timeout              building or rolling it out took longer than the per-env timeout

With ``wrappers=True`` every wrapper class of ``gymnasium.wrappers`` (and of the imported
modules) is built around a suitable env with non-default arguments where they can be guessed,
captured, rebuilt in a worker and compared attribute by attribute for the arguments it was
given (wrappers that cannot be built around any env are ``skipped``, with the reason).

Work is spread over ``jobs`` long-lived workers (default: the CPU count) fed one env at a time,
with a per-env timeout; a worker that hangs or dies is killed and replaced, so a bad env costs
its own slot only. The reference side runs here, overlapping the workers.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Literal

import numpy as np

from .._capture import capture
from .._text import suggest
from .._verify.engine import WHERE, Trace, compare, trace
from ..carry.values import exact_key
from ..errors import SpecPackError, UnknownEnvError, UnrecordedArgumentsError

__all__ = [
    "FAILING",
    "STATUSES",
    "AuditReport",
    "Finding",
    "audit",
    "audit_main",
]

IDENTICAL = "identical"
NOT_IDENTICAL = "not_identical"
CAPTURE_ERROR = "capture_error"
REBUILD_ERROR = "rebuild_error"
MISSING_DEPENDENCY = "missing_dependency"
TIMEOUT = "timeout"
SKIPPED = "skipped"

#: Every status a finding can have (``skipped`` is for wrappers that could not be built).
STATUSES = (
    IDENTICAL,
    NOT_IDENTICAL,
    CAPTURE_ERROR,
    REBUILD_ERROR,
    MISSING_DEPENDENCY,
    TIMEOUT,
    SKIPPED,
)
#: The statuses that make an audit fail (``specpack audit`` exits 1).
FAILING = frozenset({NOT_IDENTICAL, CAPTURE_ERROR, REBUILD_ERROR, TIMEOUT})

SCHEMA = "specpack.audit/1"
DEFAULT_TIMEOUT = 60.0


# -- the report ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """The audit's verdict on one env (``kind="env"``) or wrapper class (``kind="wrapper"``).

    ``reason`` is one line: the first difference, the error, or the missing package;
    ``differences`` lists everything that differed, ``detail`` holds a traceback where there is
    one (the worker's own for a rebuild error).
    """

    kind: str
    name: str
    status: str
    reason: str = ""
    differences: tuple[str, ...] = ()
    package: str | None = None
    detail: str = ""
    notes: tuple[str, ...] = ()
    elapsed: float = 0.0
    base_env: str | None = None
    args: Mapping[str, str] = field(default_factory=dict)
    defaulted: Mapping[str, str] = field(default_factory=dict)

    @property
    def portable(self) -> bool:
        """False iff the status makes the audit fail (see :data:`FAILING`)."""
        return self.status not in FAILING

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``envs``/``wrappers`` entries of ``--json``)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "name": self.name,
            "status": self.status,
            "reason": self.reason,
            "differences": list(self.differences),
            "package": self.package,
            "detail": self.detail,
            "notes": list(self.notes),
            "elapsed": round(self.elapsed, 4),
        }
        if self.kind == "wrapper":
            out["base_env"] = self.base_env
            out["args"] = dict(self.args)
            out["defaulted"] = dict(self.defaulted)
        return out

    def __str__(self) -> str:
        head = f"{self.name}: {self.status}"
        return f"{head}: {self.reason}" if self.reason else head


@dataclass
class AuditReport:
    """What :func:`audit` found: truthy iff every finding is portable.

    ``envs`` and ``wrappers`` keep the order of selection; ``counts()`` gives the number per
    status, ``to_json()`` the machine-readable report, ``str(report)`` the summary table.
    """

    envs: list[Finding]
    wrappers: list[Finding]
    elapsed: float
    where: str
    steps: int
    seed: int
    jobs: int
    timeout: float
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def findings(self) -> list[Finding]:
        """Every finding, envs first."""
        return [*self.envs, *self.wrappers]

    @property
    def failures(self) -> list[Finding]:
        """The findings that are not portable."""
        return [f for f in self.findings if not f.portable]

    @property
    def portable(self) -> bool:
        """True iff nothing failed (missing dependencies and skipped wrappers do not fail)."""
        return not self.failures

    def __bool__(self) -> bool:
        return self.portable

    def counts(self, kind: str = "env") -> dict[str, int]:
        """The number of findings per status (every status listed, zeros included)."""
        items = self.envs if kind == "env" else self.wrappers
        out = dict.fromkeys(STATUSES if kind == "wrapper" else STATUSES[:-1], 0)
        for f in items:
            out[f.status] = out.get(f.status, 0) + 1
        return out

    def __getitem__(self, name: str) -> Finding:
        for f in self.findings:
            if f.name == name:
                return f
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``specpack audit --json`` (schema ``specpack.audit/1``)."""
        return {
            "schema": SCHEMA,
            "portable": self.portable,
            "elapsed": round(self.elapsed, 3),
            "where": self.where,
            "steps": self.steps,
            "seed": self.seed,
            "jobs": self.jobs,
            "timeout": self.timeout,
            "versions": dict(self.versions),
            "counts": {"envs": self.counts("env"), "wrappers": self.counts("wrapper")},
            "envs": [f.to_dict() for f in self.envs],
            "wrappers": [f.to_dict() for f in self.wrappers],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, default=str)

    def __str__(self) -> str:
        return summary(self)


# -- selecting envs ------------------------------------------------------------------------------


def _registry() -> Any:
    from gymnasium.envs.registration import registry

    return registry


def _entry_module(spec: Any) -> str:
    ep = spec.entry_point
    if isinstance(ep, str):
        return ep.partition(":")[0]
    return str(getattr(ep, "__module__", "") or "")


def _matches(target: str, spec: Any) -> bool:
    if target.endswith("/"):
        return bool(spec.id.startswith(target) or (spec.namespace or "") == target[:-1])
    module = _entry_module(spec)
    return module == target or module.startswith(target + ".")


def _select(targets: Sequence[str], imported: list[str]) -> list[str]:
    """The env ids the targets name, in registry order (see :func:`audit`)."""
    registry = _registry()
    if not targets:
        return list(registry)
    chosen: dict[str, None] = {}
    for target in targets:
        if not isinstance(target, str) or not target:
            raise SpecPackError(f"audit target {target!r} must be a non-empty string")
        if target in registry or ":" in target:
            chosen[target] = None
            continue
        found = [k for k, s in registry.items() if _matches(target, s)]
        if not found and not target.endswith("/") and _looks_like_module(target):
            # "minigrid": importing the package is what registers its envs.
            try:
                importlib.import_module(target)
                imported.append(target)
            except ImportError:
                pass
            registry = _registry()
            found = [k for k, s in registry.items() if _matches(target, s)]
        if not found:
            raise UnknownEnvError(
                f"audit target {target!r} matches no registered env: it is not an env id, a "
                f"namespace ('ALE/') or an entry-point module prefix ('minigrid');"
                f"{suggest(target, registry.keys())} Import the package that registers it first "
                f"(--import MODULE, or imports=[...])"
            )
        chosen.update(dict.fromkeys(found))
    return list(chosen)


def _looks_like_module(name: str) -> bool:
    return all(part.isidentifier() for part in name.split("."))


def _import_all(modules: Sequence[str]) -> list[str]:
    done = []
    for name in modules:
        if not isinstance(name, str) or not _looks_like_module(name):
            raise SpecPackError(
                f"--import {name!r}: not a module name (put the TARGETs before --import, or "
                "end its list with --)"
            )
        try:
            importlib.import_module(name)
        except Exception as e:
            raise SpecPackError(
                f"--import {name}: importing the module failed ({type(e).__name__}: {e}); "
                "install it or fix the module name"
            ) from e
        done.append(name)
    return done


# -- classifying errors --------------------------------------------------------------------------


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        yield node
        node = node.__cause__ or node.__context__


_PIP = re.compile(r"pip install\s+(?:-U\s+)?[`'\"]?([A-Za-z0-9][A-Za-z0-9_.\-]*(?:\[[^\]\s]*\])?)")
_SUPPORTED = re.compile(r"only supported (?:on|with) [`'\"]([^`'\"]+)[`'\"]")
_MOVED = re.compile(r"moved to (?:the )?[`'\"]?([A-Za-z0-9][A-Za-z0-9_.\-]*)[`'\"]? project")


def _hinted_package(text: str) -> str | None:
    hits: list[str] = _PIP.findall(text)
    with_extra = [h for h in hits if "[" in h]
    if with_extra or hits:
        return (with_extra or hits)[0]
    for pattern in (_SUPPORTED, _MOVED):
        hit = pattern.search(text)
        if hit:
            return str(hit.group(1))
    return None


def _missing_package(exc: BaseException) -> str | None:
    """The package a failure says is missing, or None when it is not a missing dependency.

    gymnasium's ``DependencyNotInstalled`` and any ``ImportError`` count (the package is taken
    from a ``pip install ...`` hint in the message, else from the module name), except a
    ``ModuleNotFoundError`` inside a package that is installed: that is a broken env module.
    """
    chain = list(_chain(exc))
    for e in chain:
        if type(e).__name__ == "DependencyNotInstalled":
            return _hinted_package(str(e)) or _module_top(chain) or "unknown"
    top = _module_top(chain)
    if top is not None:
        return top
    for e in chain:
        if isinstance(e, ImportError) and not isinstance(e, ModuleNotFoundError):
            named = e.name.partition(".")[0] if e.name else None
            return _hinted_package(str(e)) or named or "unknown"
    return None


def _module_top(chain: list[BaseException]) -> str | None:
    for e in chain:
        if isinstance(e, ModuleNotFoundError) and e.name:
            top = e.name.partition(".")[0]
            try:
                absent = importlib.util.find_spec(top) is None
            except (ImportError, ValueError):
                absent = True
            if absent:
                return top
    return None


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first if len(first) <= 400 else first[:397] + "..."


def _format(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


class _Overtime(BaseException):
    """Raised by the alarm when work here exceeds the per-env timeout."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt work in this process after ``seconds`` (main thread, no alarm of the caller)."""
    usable = (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0.0
    )
    if not usable:
        yield
        return

    def _ring(signum: int, frame: Any) -> None:
        raise _Overtime()

    previous = signal.signal(signal.SIGALRM, _ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


# -- workers -------------------------------------------------------------------------------------

_BOOT = "from specpack._audit import _worker_main; _worker_main()"


class _Worker:
    """One long-lived worker process fed one task at a time over a pipe."""

    def __init__(self, where: str, tmp: str, index: int) -> None:
        self.where = where
        self.index = index
        self.cwd = tempfile.mkdtemp(prefix=f"worker{index}-", dir=tmp)
        self.log_path = os.path.join(self.cwd, "stderr.log")
        self.task: _Task | None = None
        self.started = 0.0
        self._log_offset = 0
        self.proc: Any
        if where == "subprocess":
            with open(self.log_path, "ab") as log:
                proc = subprocess.Popen(
                    [sys.executable, "-c", _BOOT],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    cwd=self.cwd,
                    env=dict(os.environ),
                )
            assert proc.stdin is not None and proc.stdout is not None
            self.out = Connection(os.dup(proc.stdin.fileno()), readable=False)
            self.inp = Connection(os.dup(proc.stdout.fileno()), writable=False)
            proc.stdin.close()
            proc.stdout.close()
            self.proc = proc
        else:
            import multiprocessing as mp

            ctx: Any = mp.get_context(where)
            parent, child = ctx.Pipe(duplex=True)
            self.proc = ctx.Process(
                target=_mp_worker,
                args=(child, self.log_path, self.cwd),
                name=f"specpack-audit-{index}",
                daemon=True,
            )
            self.proc.start()
            child.close()
            self.out = self.inp = parent

    @property
    def label(self) -> str:
        return self.label_for(self.where)

    @staticmethod
    def label_for(where: str) -> str:
        return "fresh interpreter" if where == "subprocess" else f"{where} worker"

    def send(self, task: _Task) -> None:
        try:
            self._log_offset = os.path.getsize(self.log_path)
        except OSError:
            self._log_offset = 0
        self.task = task
        self.started = time.perf_counter()
        self.out.send_bytes(task.request)

    def receive(self) -> Any:
        """The worker's answer; raises EOFError/OSError when it died."""
        return pickle.loads(self.inp.recv_bytes())

    def exitcode(self) -> int | None:
        if self.where == "subprocess":
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(2)
            code: int | None = self.proc.poll()
            return code
        self.proc.join(2)
        code = self.proc.exitcode
        return code

    def stderr_tail(self, limit: int = 3000) -> str:
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(self._log_offset)
                data = fh.read()
        except OSError:
            return ""
        text = data.decode("utf-8", "replace").strip()
        return text[-limit:]

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.proc.kill()
        with contextlib.suppress(Exception):
            if self.where == "subprocess":
                self.proc.wait(5)
            else:
                self.proc.join(5)
        self._close_pipes()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.out.send_bytes(pickle.dumps(None))
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            if self.where == "subprocess":
                if self.proc.poll() is not None:
                    break
            elif not self.proc.is_alive():
                break
            time.sleep(0.02)
        self.kill()

    def _close_pipes(self) -> None:
        for conn in {id(self.out): self.out, id(self.inp): self.inp}.values():
            with contextlib.suppress(Exception):
                conn.close()


def _serve(inp: Connection, out: Connection) -> None:
    """The worker loop: rebuild each pack it is sent, trace it, send the result back."""
    while True:
        try:
            data = inp.recv_bytes()
        except (EOFError, OSError):
            return
        request = pickle.loads(data)
        if request is None:
            return
        key, blob, steps, seed, probes = request
        result = _rebuild(blob, steps, seed, probes)
        try:
            payload = pickle.dumps((key, result), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # noqa: BLE001 - e.g. an unpicklable custom space
            payload = pickle.dumps(
                (key, {"error": f"cannot send the trace back ({type(e).__name__}: {e})"})
            )
        out.send_bytes(payload)


def _rebuild(blob: bytes, steps: int, seed: int, probes: tuple[str, ...]) -> dict[str, Any]:
    try:
        pack = pickle.loads(blob)
        env = pack.make()
        try:
            seen = _probe(env, probes) if probes else {}
            return {"trace": _compact(trace(env, steps, seed)), "probes": seen}
        finally:
            with contextlib.suppress(Exception):
                env.close()
    except BaseException as e:  # noqa: BLE001 - everything goes back to the parent
        return {"error": _format(e), "summary": _one_line(e)}


def _worker_main() -> None:
    """Entry point of a fresh-interpreter worker: requests on stdin, results on stdout.

    Anything the envs print goes to stderr (a log file), so it cannot corrupt the protocol.
    """
    out_fd = os.dup(1)
    in_fd = os.dup(0)
    os.dup2(2, 1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    _serve(Connection(in_fd, writable=False), Connection(out_fd, readable=False))


def _mp_worker(conn: Connection, log_path: str, cwd: str) -> None:
    """multiprocessing target of a spawn/forkserver worker."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.chdir(cwd)
    _serve(conn, conn)


# -- jobs ----------------------------------------------------------------------------------------


@dataclass
class _Task:
    job: _Job
    label: str
    request: bytes
    retried: bool = False


class _Decided(Exception):
    """A job reached its verdict early (it carries the finding)."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.status)
        self.finding = finding


@dataclass
class _Context:
    steps: int
    seed: int
    timeout: float
    where: str
    tmp: str


def _failure(exc: BaseException, what: str, timeout: float) -> dict[str, Any]:
    """How an exception raised on the reference side (here) is reported."""
    if isinstance(exc, _Overtime):
        return {"status": TIMEOUT, "reason": f"{what} here did not finish within {timeout:g} s"}
    package = _missing_package(exc)
    if package is not None:
        return {
            "status": MISSING_DEPENDENCY,
            "reason": f"needs {package}: {_one_line(exc)}",
            "package": package,
            "detail": _format(exc),
        }
    return {
        "status": CAPTURE_ERROR,
        "reason": f"{what} failed: {_one_line(exc)}",
        "detail": _format(exc),
    }


class _Job:
    """One env or wrapper under audit.

    ``prepare`` runs here and queues the worker task(s); ``reference_work`` builds the
    reference (in a fork of this process, or here) and never raises; ``take_reference`` and
    ``verdict`` run here and turn the results into a :class:`Finding`.
    """

    kind = "env"

    def __init__(self, name: str, ctx: _Context) -> None:
        self.name = name
        self.ctx = ctx
        self.t0 = 0.0
        self.pending: list[tuple[str, bytes, tuple[str, ...]]] = []
        self.outstanding: set[str] = set()
        self.results: dict[str, dict[str, Any]] = {}
        self.reference: Trace | None = None
        self.finding: Finding | None = None
        self.differences: list[str] = []
        self.notes: list[str] = []
        self.worker_label = "fresh interpreter"

    def prepare(self) -> None:
        raise NotImplementedError

    def reference_work(self) -> dict[str, Any]:
        raise NotImplementedError

    def take_reference(self, result: dict[str, Any]) -> None:
        if "failed" in result:
            raise _Decided(self.finish_failure(result["failed"]))
        self.reference = result["trace"]

    def verdict(self) -> Finding:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the job holds here (called once it is decided)."""

    def add_task(self, label: str, blob: bytes, probes: tuple[str, ...] = ()) -> None:
        self.pending.append((label, blob, probes))
        self.outstanding.add(label)

    def finish(self, status: str, reason: str, **extra: Any) -> Finding:
        return Finding(
            kind=self.kind,
            name=self.name,
            status=status,
            reason=reason,
            notes=tuple(self.notes),
            elapsed=time.perf_counter() - self.t0,
            **extra,
        )

    def finish_failure(self, failure: dict[str, Any]) -> Finding:
        return self.finish(
            failure["status"],
            failure["reason"],
            package=failure.get("package"),
            detail=failure.get("detail", ""),
        )

    def failed_here(self, exc: BaseException, what: str) -> Finding:
        """The finding for an exception raised here, in the parent."""
        return self.finish_failure(_failure(exc, what, self.ctx.timeout))

    def result_error(self, label: str) -> Finding | None:
        """A rebuild error or timeout reported for one of this job's worker tasks."""
        res = self.results.get(label, {})
        if "timeout" in res:
            return self.finish(TIMEOUT, res["timeout"], detail=res.get("error", ""))
        if "error" in res:
            summary = res.get("summary") or res["error"].strip().splitlines()[-1:][0]
            return self.finish(
                REBUILD_ERROR,
                f"the rebuild in a {self.worker_label} failed: {summary}",
                detail=res["error"],
            )
        return None


def _guard(what: str, timeout: float, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    try:
        return work()
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return {"failed": _failure(e, what, timeout)}


class _EnvJob(_Job):
    """An env: capture here, reference here, rebuild in a worker, coverage checks."""

    kind = "env"

    def __init__(self, name: str, ctx: _Context, target: Any = None, live: bool = True) -> None:
        super().__init__(name, ctx)
        self.target = name if target is None else target
        self.check_live = live
        self.pack: Any = None

    def prepare(self) -> None:
        try:
            with _time_limit(self.ctx.timeout):
                self.pack = capture(self.target)
                blob = pickle.dumps(self.pack, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            raise _Decided(self.failed_here(e, "capturing it")) from None
        self.notes.extend(self.pack.notes)
        if self.pack.nondeterministic:
            self.notes.append("rollout not compared: the spec says nondeterministic=True")
        self.add_task("rebuild", blob)
        self.outstanding.add("reference")

    def reference_work(self) -> dict[str, Any]:
        return _guard("building it", self.ctx.timeout, self._reference)

    def _reference(self) -> dict[str, Any]:
        env = self.pack.make()
        try:
            coverage, live_blob, failed = self._coverage(env)
            if failed is not None:
                return {"failed": failed}
            t = _compact(trace(env, self.ctx.steps, self.ctx.seed))
        finally:
            with contextlib.suppress(Exception):
                env.close()
        return {"trace": t, "coverage": coverage, "live": live_blob}

    def _coverage(self, env: Any) -> tuple[list[str], bytes | None, dict[str, Any] | None]:
        """What the env records about its arguments: EzPickle and the live wrapper stack."""
        live_target = _is_live_env(self.target)
        coverage = _ezpickle_gaps(self.target if live_target else env, self.pack)
        if not self.check_live or live_target:
            return coverage, None, None
        try:
            live = capture(env)
        except UnrecordedArgumentsError as e:
            coverage.append(f"capture(env) of a live instance refuses: {e}")
            return coverage, None, None
        except SpecPackError as e:
            failed = {
                "status": CAPTURE_ERROR,
                "reason": f"capture(env) of a live instance failed: {_one_line(e)}",
                "detail": _format(e),
            }
            return coverage, None, failed
        if _same_recipe(live, self.pack):
            return coverage, None, None
        return coverage, pickle.dumps(live, protocol=pickle.HIGHEST_PROTOCOL), None

    def take_reference(self, result: dict[str, Any]) -> None:
        super().take_reference(result)
        self.differences.extend(result["coverage"])
        if result["live"] is not None:
            self.add_task("live", result["live"])

    def verdict(self) -> Finding:
        assert self.reference is not None
        failure = self.result_error("rebuild")
        if failure is not None:
            return failure
        diffs = compare(
            self.reference, self.results["rebuild"]["trace"], labels=("here", self.worker_label)
        )
        diffs.extend(self.differences)
        if "live" in self.results:
            res = self.results["live"]
            if "trace" in res:
                ref = dataclasses.replace(self.reference, spec={})
                remote = dataclasses.replace(res["trace"], spec={})
                diffs.extend(
                    f"rebuilt from capture(env) of a live instance: {d}"
                    for d in compare(ref, remote, labels=("here", self.worker_label))
                )
            else:
                diffs.append(
                    "rebuilt from capture(env) of a live instance: "
                    + (res.get("timeout") or res.get("summary") or "failed")
                )
        if diffs:
            return self.finish(NOT_IDENTICAL, diffs[0], differences=tuple(diffs))
        return self.finish(IDENTICAL, "")


def _is_live_env(obj: Any) -> bool:
    try:
        import gymnasium
    except ImportError:  # pragma: no cover
        return False
    return isinstance(obj, gymnasium.Env)


def _same_recipe(a: Any, b: Any) -> bool:
    """Whether two packs build the same stack from the same entry point with the same kwargs.

    A wrapper argument recorded at its default counts as not given (``capture(env)`` of a live
    ``OrderEnforcing`` records ``disable_render_order_enforcing=False``, ``make`` passes none).
    """
    try:
        return bool(
            a.entry_point == b.entry_point
            and exact_key(a._kwargs) == exact_key(b._kwargs)
            and _layer_keys(a) == _layer_keys(b)
        )
    except Exception:  # noqa: BLE001 - when unsure, rebuild the live capture too
        return False


def _layer_keys(pack: Any) -> list[tuple[Any, Any]]:
    out = []
    for layer in pack.layers:
        params = inspect.signature(_init_of(layer.cls.load())).parameters
        kwargs = {
            k: v
            for k, v in layer._kwargs.items()
            if not (
                k in params
                and params[k].default is not params[k].empty
                and _same(v, params[k].default)
            )
        }
        out.append((layer.cls, exact_key(kwargs)))
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return bool(np.array_equal(np.asarray(a), np.asarray(b)))
        except Exception:  # noqa: BLE001
            return False
    if callable(a) or callable(b):
        return a is b or _view(a) == _view(b)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def _ezpickle_gaps(env: Any, pack: Any) -> list[str]:
    """Arguments the base env was built with that its EzPickle record misses or changes."""
    from gymnasium.utils import EzPickle

    from ..backends._shared import check_coverage, ezpickle_kwargs

    base = getattr(env, "unwrapped", env)
    if not isinstance(base, EzPickle):
        return []
    cls = type(base)
    name = f"{cls.__module__}.{cls.__qualname__}"
    try:
        recorded = ezpickle_kwargs(base, cls) or {}
    except UnrecordedArgumentsError as e:
        return [f"EzPickle gap: {e}"]
    out: list[str] = []
    try:
        built_from_class = pack.entry_point.load() is cls
    except Exception:  # noqa: BLE001
        built_from_class = False
    spec = getattr(base, "spec", None)
    passed = dict(getattr(spec, "kwargs", None) or {}) if built_from_class else {}
    fix = f"pass every argument to EzPickle.__init__ in {cls.__qualname__}.__init__"
    for key, value in passed.items():
        if key not in recorded:
            default = _default_of(cls, key)
            out.append(
                f"EzPickle gap: {name} was built with {key}={_short(value)} but EzPickle did "
                f"not record it, so pickle.loads(pickle.dumps(env)) rebuilds it with "
                f"{key}={default}; {fix}"
            )
        elif not _same(recorded[key], value):
            out.append(
                f"EzPickle gap: {name} was built with {key}={_short(value)} but EzPickle "
                f"recorded {key}={_short(recorded[key])}; {fix}"
            )
    if not out:
        try:
            check_coverage(base, cls, recorded, "EzPickle", fix)
        except UnrecordedArgumentsError as e:
            out.append(f"EzPickle gap: {e}")
    return out


def _default_of(cls: type, name: str) -> str:
    try:
        param = inspect.signature(_init_of(cls)).parameters.get(name)
    except (TypeError, ValueError):
        param = None
    if param is None or param.default is inspect.Parameter.empty:
        return "<no default: the rebuild raises TypeError>"
    return _short(param.default)


def _init_of(cls: type) -> Any:
    """``cls.__init__`` (spelled so that a type checker accepts it on any class)."""
    return getattr(cls, "__init__")  # noqa: B009


def _short(v: Any, limit: int = 80) -> str:
    r = repr(v)
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _compares_by_identity(v: Any) -> bool:
    """Whether ``v``'s type keeps ``object``'s ``==`` (only its type can then be compared)."""
    eq: Any = type(v).__eq__
    return bool(eq is object.__eq__)


def _view(v: Any) -> Any:
    """A comparable, picklable stand-in for a value (callables by name, arrays by content)."""
    if isinstance(v, type):
        return f"<class {v.__module__}.{v.__qualname__}>"
    if callable(v):
        mod = getattr(v, "__module__", None) or type(v).__module__
        qual = getattr(v, "__qualname__", None) or type(v).__qualname__
        return f"<callable {mod}.{qual}>"
    if isinstance(v, np.ndarray):
        return ("ndarray", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, (list, tuple)):
        return [_view(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _view(x) for k, x in v.items()}
    if v is not None and _compares_by_identity(v):
        return f"<{type(v).__module__}.{type(v).__qualname__} object>"
    try:
        pickle.dumps(v)
    except Exception:  # noqa: BLE001
        return repr(v)
    return v


_ABSENT = "<absent>"


def _probe(env: Any, names: Sequence[str]) -> dict[str, Any]:
    """What the outermost wrapper shows for each argument name (attribute, recorded value)."""
    d = getattr(env, "__dict__", {})
    saved = getattr(env, "_saved_kwargs", None)
    out: dict[str, Any] = {}
    for name in names:
        attr: Any = _ABSENT
        for key in (name, f"_{name}"):
            if key in d:
                attr = _view(d[key])
                break
        rec = _view(saved[name]) if isinstance(saved, dict) and name in saved else _ABSENT
        out[name] = {"attribute": attr, "recorded": rec}
    return out


# -- wrappers ------------------------------------------------------------------------------------


def _negate(x: Any) -> Any:
    """The ``func`` given to Transform* wrappers: a named, importable, visible change."""
    return -x


def _base_cartpole() -> Any:
    import gymnasium

    return gymnasium.make("CartPole-v1")


def _base_pendulum() -> Any:
    import gymnasium

    return gymnasium.make("Pendulum-v1")


def _base_cartpole_rgb() -> Any:
    import gymnasium

    return gymnasium.make("CartPole-v1", render_mode="rgb_array")


def _base_pendulum_rgb() -> Any:
    import gymnasium

    return gymnasium.make("Pendulum-v1", render_mode="rgb_array")


def _base_pixels() -> Any:
    from gymnasium.wrappers import AddRenderObservation

    return AddRenderObservation(_base_cartpole_rgb(), render_only=True)


def _base_dict() -> Any:
    from gymnasium.wrappers import AddRenderObservation

    return AddRenderObservation(_base_cartpole_rgb(), render_only=False)


def _base_atari() -> Any:
    import ale_py  # noqa: F401 - registers the ALE envs
    import gymnasium

    return gymnasium.make("ALE/Pong-v5", frameskip=1)


_BASES: dict[str, Callable[[], Any]] = {
    "CartPole-v1": _base_cartpole,
    "Pendulum-v1": _base_pendulum,
    "CartPole-v1 (render_mode='rgb_array')": _base_cartpole_rgb,
    "Pendulum-v1 (render_mode='rgb_array')": _base_pendulum_rgb,
    "AddRenderObservation(CartPole-v1) (pixel observations)": _base_pixels,
    "AddRenderObservation(CartPole-v1, render_only=False) (dict observations)": _base_dict,
}
_ATARI = "ALE/Pong-v5 (frameskip=1)"
_RGB = "CartPole-v1 (render_mode='rgb_array')"
_PIXELS = "AddRenderObservation(CartPole-v1) (pixel observations)"
_PREFERRED: dict[str, tuple[str, ...]] = {
    "AtariPreprocessing": (_ATARI,),
    "FilterObservation": (
        "AddRenderObservation(CartPole-v1, render_only=False) (dict observations)",
    ),
    "GrayscaleObservation": (_PIXELS,),
    "ResizeObservation": (_PIXELS,),
    "DiscretizeObservation": ("Pendulum-v1",),
    "RescaleObservation": ("Pendulum-v1",),
    "ClipAction": ("Pendulum-v1",),
    "DiscretizeAction": ("Pendulum-v1",),
    "RescaleAction": ("Pendulum-v1",),
    "TransformAction": ("Pendulum-v1",),
    "AddRenderObservation": (_RGB,),
    "AddWhiteNoise": (_RGB,),
    "ObstructView": (_RGB,),
    "RenderCollection": (_RGB,),
    "RecordVideo": (_RGB,),
    "HumanRendering": (_RGB,),
}

#: Plausible non-default values by parameter name (first choice first); gymnasium's wrappers.
_NAMED: dict[str, tuple[Any, ...]] = {
    "max_episode_steps": (7,),
    "delay": (2,),
    "stack_size": (3,),
    "padding_type": ("zero",),
    "num_repeats": (2,),
    "skip": (2,),
    "bins": (5, (5,)),
    "multidiscrete": (True,),
    "repeat_action_probability": (0.25,),
    "repeat_action_duration": (2,),
    "dtype": (np.float64,),
    "shape": ((2, 2), (32, 32)),
    "filter_keys": (["state"],),
    "min_action": (-0.5,),
    "max_action": (0.5,),
    "min_obs": (-0.5,),
    "max_obs": (0.5,),
    "min_reward": (-0.5,),
    "max_reward": (0.5,),
    "func": (_negate,),
    "observation_space": (None,),
    "action_space": (None,),
    "probability_of_noise_per_pixel": (0.1,),
    "obstructed_pixels_ratio": (0.1,),
    "obstruction_width": (3,),
    "epsilon": (1e-6,),
    "gamma": (0.9,),
    "buffer_length": (10,),
    "stats_key": ("ep",),
    "render_only": (False,),
    "render_key": ("frame",),
    "obs_key": ("observation",),
    "dict_time_key": ("t",),
    "name_prefix": ("audit",),
    "fps": (10,),
    "video_length": (5,),
    "noop_max": (10,),
    "frame_skip": (2,),
    "screen_size": (64,),
}
#: Arguments better left alone (callables that would change when the episode is recorded).
_LEAVE = frozenset({"episode_trigger", "step_trigger", "gc_trigger"})


def _candidates(p: inspect.Parameter, tmp: str) -> tuple[tuple[Any, ...], str | None]:
    """Values to try for one parameter, or ``((), why)`` to leave it at its default."""
    if p.name == "video_folder":
        return (os.path.join(tmp, "videos"),), None
    if p.name in _LEAVE and p.default is not p.empty:
        return (), "a callable trigger: left at its default"
    if p.name in _NAMED:
        return _NAMED[p.name], None
    d = p.default
    if d is p.empty:
        ann = str(p.annotation)
        if "bool" in ann:
            return (True,), None
        if "int" in ann:
            return (2, 3), None
        if "float" in ann:
            return (0.5,), None
        return (), f"required, and no value can be guessed for its type ({ann})"
    if isinstance(d, bool):
        return (not d,), None
    if isinstance(d, int):
        return (d + 1, d + 2), None
    if isinstance(d, float):
        return ((d * 0.5 if d else 0.5), d + 0.25), None
    return (), f"cannot guess a non-default value for {type(d).__name__} {d!r}"


def _wrapper_classes(modules: Sequence[str]) -> list[tuple[str, type]]:
    """``(public name, class)`` of every wrapper in gymnasium.wrappers and the given modules."""
    import gymnasium
    import gymnasium.wrappers as gw

    out: dict[type, str] = {}
    failures: list[tuple[str, type]] = []
    for attr in sorted(getattr(gw, "__all__", dir(gw))):
        try:
            obj = getattr(gw, attr)
        except Exception as e:  # noqa: BLE001 - e.g. needs jax/torch
            failures.append((f"gymnasium.wrappers.{attr}", _Unloadable.make(e)))
            continue
        if isinstance(obj, type) and issubclass(obj, gymnasium.Wrapper):
            out.setdefault(obj, f"gymnasium.wrappers.{attr}")
    for prefix in modules:
        for modname, mod in sorted(sys.modules.items()):
            if mod is None or not (modname == prefix or modname.startswith(prefix + ".")):
                continue
            for attr, obj in sorted(vars(mod).items()):
                if (
                    isinstance(obj, type)
                    and issubclass(obj, gymnasium.Wrapper)
                    and obj.__module__ == modname
                    and not attr.startswith("_")
                ):
                    out.setdefault(obj, f"{modname}.{attr}")
    return [(name, cls) for cls, name in out.items()] + failures


class _Unloadable:
    """Stands in for a wrapper whose module cannot be imported here."""

    error: BaseException

    @staticmethod
    def make(e: BaseException) -> type:
        return type("_Unloadable", (_Unloadable,), {"error": e})


class _WrapperJob(_Job):
    """A wrapper class: build around a base env with guessed arguments, rebuild, compare."""

    kind = "wrapper"

    def __init__(self, name: str, cls: type, ctx: _Context, extra_bases: list[str]) -> None:
        super().__init__(name, ctx)
        self.cls = cls
        self.extra_bases = extra_bases
        self.live: Any = None
        self.given: dict[str, Any] = {}
        self.defaulted: dict[str, str] = {}
        self.base: str | None = None
        self.live_probes: dict[str, Any] = {}

    def finish(self, status: str, reason: str, **extra: Any) -> Finding:
        extra.setdefault("base_env", self.base)
        extra.setdefault("args", {k: _arg_text(v) for k, v in self.given.items()})
        extra.setdefault("defaulted", dict(self.defaulted))
        return super().finish(status, reason, **extra)

    def _bases(self) -> list[tuple[str, Callable[[], Any]]]:
        names = list(_PREFERRED.get(self.cls.__name__, ()))
        names += [n for n in self.extra_bases if n not in names]
        names += [n for n in _BASES if n not in names]
        out = []
        for n in names:
            if n == _ATARI:
                out.append((n, _base_atari))
            elif n in _BASES:
                out.append((n, _BASES[n]))
            else:
                out.append((n, _registered_base(n)))
        return out

    def prepare(self) -> None:
        if issubclass(self.cls, _Unloadable):
            raise _Decided(self.failed_here(self.cls.error, "importing it"))
        try:
            with _time_limit(self.ctx.timeout):
                self._build_live()
        except _Decided:
            raise
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            raise _Decided(self.failed_here(e, "building it")) from None
        self.differences.extend(self._record_check())
        try:
            pack = capture(self.live)
        except UnrecordedArgumentsError as e:
            diffs = [*self.differences, f"capture(env) refuses: {e}"]
            self._close_live()
            raise _Decided(self.finish(NOT_IDENTICAL, diffs[0], differences=tuple(diffs))) from None
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            self._close_live()
            raise _Decided(self.failed_here(e, "capturing it")) from None
        self.live_probes = _probe(self.live, tuple(self.given))
        self.add_task(
            "rebuild", pickle.dumps(pack, protocol=pickle.HIGHEST_PROTOCOL), tuple(self.given)
        )
        self.outstanding.add("reference")

    def _build_live(self) -> None:
        try:
            params = list(inspect.signature(_init_of(self.cls)).parameters.values())[1:]
        except (TypeError, ValueError):
            params = []
        params = [
            p for p in params if p.name != "env" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        choices: dict[str, tuple[Any, ...]] = {}
        for p in params:
            values, why = _candidates(p, self.ctx.tmp)
            if values:
                choices[p.name] = values
            elif p.default is p.empty:
                raise _Decided(
                    self.finish(SKIPPED, f"cannot guess a value for the argument {p.name!r}: {why}")
                )
            else:
                self.defaulted[p.name] = why or "left at its default"
        required = {p.name for p in params if p.default is p.empty}
        width = max((len(v) for v in choices.values()), default=1)
        attempts: list[dict[str, Any]] = [
            {k: v[min(i, len(v) - 1)] for k, v in choices.items()} for i in range(width)
        ]
        fallback = {k: v for k, v in attempts[0].items() if k in required}
        if fallback != attempts[0]:
            attempts.append(fallback)
        errors: list[str] = []
        first: BaseException | None = None
        for base_name, builder in self._bases():
            for args in attempts:
                try:
                    env = builder()
                except Exception as e:  # noqa: BLE001 - try the next base
                    first = first or e
                    errors.append(f"{base_name}: {_one_line(e)}")
                    break
                try:
                    self.live = self.cls(env, **args)
                except Exception as e:  # noqa: BLE001 - try other values, then the next base
                    first = first or e
                    errors.append(f"{base_name} with {_args_text(args)}: {_one_line(e)}")
                    with contextlib.suppress(Exception):
                        env.close()
                    continue
                self.base = base_name
                self.given = dict(args)
                for name in choices:
                    if name not in args:
                        self.defaulted[name] = (
                            "left at its default: the non-default values were rejected ("
                            + errors[-1]
                            + ")"
                        )
                return
        assert first is not None
        package = _missing_package(first)
        if package is not None:
            raise _Decided(
                self.finish(
                    MISSING_DEPENDENCY,
                    f"needs {package}: {_one_line(first)}",
                    package=package,
                    detail="\n".join(errors),
                )
            )
        raise _Decided(
            self.finish(
                SKIPPED,
                f"could not be built around any base env ({errors[0]})",
                detail="\n".join(errors),
            )
        )

    def _record_check(self) -> list[str]:
        """The wrapper's own record (``_saved_kwargs``) against the arguments it was given."""
        saved = getattr(self.live, "_saved_kwargs", None)
        if saved is None:
            if self.given or self.defaulted:
                return [
                    f"{self.name} does not inherit gymnasium.utils.RecordConstructorArgs: its "
                    "arguments are not recorded, so env.spec cannot rebuild it"
                ]
            return []
        out = []
        for key, value in self.given.items():
            if key not in saved:
                out.append(
                    f"{self.name} does not record {key} (given {_short(value)}): a rebuild "
                    f"from its record uses the default {_default_of(self.cls, key)}"
                )
            elif not _same(saved[key], value):
                out.append(
                    f"{self.name} records {key}={_short(saved[key])} but was given "
                    f"{key}={_short(value)}"
                )
        try:
            params = inspect.signature(_init_of(self.cls)).parameters
        except (TypeError, ValueError):
            return out
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        for key in saved:
            if key not in params and key != "env" and not takes_any:
                out.append(
                    f"{self.name} records {key!r}, which its constructor does not take: a "
                    "rebuild from its record raises TypeError"
                )
        return out

    def reference_work(self) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            return {"trace": _compact(trace(self.live, self.ctx.steps, self.ctx.seed))}

        return _guard("rolling it out", self.ctx.timeout, work)

    def take_reference(self, result: dict[str, Any]) -> None:
        self._close_live()
        super().take_reference(result)
        assert self.reference is not None
        if self.reference.error is not None:
            self.notes.append(f"the rollout here stopped with {self.reference.error}")

    def close(self) -> None:
        self._close_live()

    def _close_live(self) -> None:
        live, self.live = self.live, None
        if live is not None:
            with contextlib.suppress(Exception):
                live.close()

    def verdict(self) -> Finding:
        assert self.reference is not None
        failure = self.result_error("rebuild")
        if failure is not None:
            return failure
        res = self.results["rebuild"]
        diffs = list(self.differences)
        for key, here in self.live_probes.items():
            there = res.get("probes", {}).get(key, {})
            for what, verb in (("attribute", "has"), ("recorded", "records")):
                if here[what] != _ABSENT and here[what] != there.get(what):
                    diffs.append(
                        f"the rebuilt wrapper {verb} {key}={_short(there.get(what))} but the "
                        f"original {verb} {key}={_short(here[what])}"
                    )
        diffs.extend(compare(self.reference, res["trace"], labels=("here", self.worker_label)))
        if diffs:
            return self.finish(NOT_IDENTICAL, diffs[0], differences=tuple(diffs))
        return self.finish(IDENTICAL, "")


def _registered_base(env_id: str) -> Callable[[], Any]:
    def build() -> Any:
        import gymnasium

        return gymnasium.make(env_id)

    return build


def _arg_text(v: Any) -> str:
    """How a given argument is shown: code by its qualified name, values by repr."""
    if isinstance(v, type) or callable(v):
        mod = getattr(v, "__module__", None) or type(v).__module__
        return f"{mod}.{getattr(v, '__qualname__', type(v).__qualname__)}"
    return _short(v)


def _args_text(args: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_arg_text(v)}" for k, v in args.items()) or "no arguments"


def _package_bases(modules: Sequence[str]) -> list[str]:
    """A couple of env ids each imported package registers (bases for its own wrappers)."""
    out: list[str] = []
    registry = _registry()
    for prefix in modules:
        top = prefix.partition(".")[0]
        hits = [k for k, s in registry.items() if _matches(top, s)]
        out.extend(hits[:2])
    return out


# -- running -------------------------------------------------------------------------------------


class _Digest:
    """A large array in a trace, by content digest (keeps results small; compares exactly)."""

    __slots__ = ("dtype", "sha", "shape")

    def __init__(self, a: np.ndarray) -> None:
        self.dtype = a.dtype.str
        self.shape = tuple(a.shape)
        self.sha = hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Digest):
            return NotImplemented
        return (self.dtype, self.shape, self.sha) == (other.dtype, other.shape, other.sha)

    def __hash__(self) -> int:
        return hash((self.dtype, self.shape, self.sha))

    def __repr__(self) -> str:
        return f"<{np.dtype(self.dtype)} array {self.shape}, sha1 {self.sha}>"

    def __getstate__(self) -> tuple[str, tuple[int, ...], str]:
        return (self.dtype, self.shape, self.sha)

    def __setstate__(self, state: tuple[str, tuple[int, ...], str]) -> None:
        self.dtype, self.shape, self.sha = state


_BIG = 64


def _small(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return _Digest(v) if v.size > _BIG and v.dtype != object else v
    if isinstance(v, dict):
        return {k: _small(x) for k, x in v.items()}
    if isinstance(v, tuple):
        return tuple(_small(x) for x in v)
    if isinstance(v, list):
        return [_small(x) for x in v]
    return v


def _compact(t: Trace) -> Trace:
    """``t`` with large arrays (images) replaced by digests, on both sides alike."""
    t.events = [_small(e) for e in t.events]
    return t


class _ForkRef:
    """A fork of this process computing one job's reference (it shares this process's state)."""

    def __init__(self, job: _Job) -> None:
        import multiprocessing as mp

        ctx: Any = mp.get_context("fork")
        self.inp, out = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_fork_reference, args=(out, job), name="specpack-ref")
        self.job = job
        self.started = time.perf_counter()
        self.proc.start()
        out.close()

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.join(5)
        with contextlib.suppress(Exception):
            self.inp.close()


def _fork_reference(conn: Connection, job: _Job) -> None:
    """Target of a reference fork: the job's reference work, sent back pickled."""
    result = job.reference_work()
    try:
        data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # noqa: BLE001
        data = pickle.dumps(
            {"failed": {"status": CAPTURE_ERROR, "reason": f"its trace does not pickle ({e})"}}
        )
    conn.send_bytes(data)
    conn.close()


def _fork_available() -> bool:
    import multiprocessing as mp

    return "fork" in mp.get_all_start_methods()


class _Scheduler:
    """Drives jobs to findings over long-lived fresh workers and reference forks."""

    def __init__(
        self,
        jobs: list[_Job],
        n_workers: int,
        ctx: _Context,
        on_done: Callable[[Finding], None] | None,
        fork_refs: bool,
    ) -> None:
        self.ctx = ctx
        self.n = n_workers
        self.on_done = on_done
        self.fork_refs = fork_refs
        self.order = {id(j): i for i, j in enumerate(jobs)}
        self.queue: deque[_Job] = deque(jobs)
        self.to_send: deque[_Task] = deque()
        self.ref_queue: deque[_Job] = deque()
        self.forks: list[_ForkRef] = []
        self.active: list[_Job] = []
        self.findings: dict[int, Finding] = {}
        self.workers: list[_Worker] = []
        self.started = 0
        self.cap = 4 * n_workers  # prepared but undecided jobs held at once

    # -- bookkeeping

    def decide(self, job: _Job, finding: Finding) -> None:
        if job.finding is not None:
            return
        job.finding = finding
        self.findings[self.order[id(job)]] = finding
        if job in self.active:
            self.active.remove(job)
        job.close()
        if self.on_done is not None:
            self.on_done(finding)

    def settle(self, job: _Job) -> None:
        if job.finding is None and not job.outstanding:
            try:
                finding = job.verdict()
            except Exception as e:  # noqa: BLE001 - a bug here must not stop the audit
                finding = job.finish(
                    CAPTURE_ERROR, f"audit error: {_one_line(e)}", detail=_format(e)
                )
            self.decide(job, finding)

    def queue_tasks(self, job: _Job) -> None:
        for label, blob, probes in job.pending:
            key = f"{self.order[id(job)]}:{label}"
            request = pickle.dumps(
                (key, blob, self.ctx.steps, self.ctx.seed, probes),
                protocol=pickle.HIGHEST_PROTOCOL,
            )
            self.to_send.append(_Task(job, label, request))
        job.pending.clear()

    def on_result(self, job: _Job, label: str, result: dict[str, Any]) -> None:
        job.outstanding.discard(label)
        if job.finding is not None:
            return
        if label == "reference":
            try:
                job.take_reference(result)
            except _Decided as d:
                self.decide(job, d.finding)
                return
            self.queue_tasks(job)
        else:
            job.results[label] = result
        self.settle(job)

    def prepare_one(self) -> None:
        job = self.queue.popleft()
        job.t0 = time.perf_counter()
        job.worker_label = _Worker.label_for(self.ctx.where)
        try:
            job.prepare()
        except _Decided as d:
            self.decide(job, d.finding)
            return
        self.active.append(job)
        self.queue_tasks(job)
        self.ref_queue.append(job)

    def can_prepare(self) -> bool:
        return bool(self.queue) and len(self.active) < self.cap

    # -- workers

    def new_worker(self) -> _Worker:
        self.started += 1
        return _Worker(self.ctx.where, self.ctx.tmp, self.started)

    def worker_done(self, worker: _Worker, result: dict[str, Any]) -> None:
        task = worker.task
        worker.task = None
        if task is not None:
            self.on_result(task.job, task.label, result)

    def replace(self, worker: _Worker, result: dict[str, Any]) -> None:
        i = self.workers.index(worker)
        worker.kill()
        self.worker_done(worker, result)
        self.workers[i] = self.new_worker()

    def feed(self) -> None:
        for worker in list(self.workers):
            if worker.task is not None:
                continue
            while not self.to_send and self.can_prepare():
                self.prepare_one()
            while self.to_send and self.to_send[0].job.finding is not None:
                task = self.to_send.popleft()
                task.job.outstanding.discard(task.label)
            if not self.to_send:
                return
            task = self.to_send.popleft()
            try:
                worker.send(task)
            except OSError:
                # The worker died while idle (or never booted): replace it and try once more.
                worker.task = None
                i = self.workers.index(worker)
                tail = worker.stderr_tail()
                worker.kill()
                self.workers[i] = self.new_worker()
                if task.retried:
                    msg = "the worker process was gone before the task was sent"
                    self.on_result(
                        task.job,
                        task.label,
                        {
                            "error": msg + (f"; its stderr ended with:\n{tail}" if tail else ""),
                            "summary": msg,
                        },
                    )
                else:
                    task.retried = True
                    self.to_send.appendleft(task)

    # -- references

    def start_references(self) -> None:
        if self.fork_refs:
            while len(self.forks) < self.n and (self.ref_queue or self.can_prepare()):
                if not self.ref_queue:
                    self.prepare_one()
                    continue
                job = self.ref_queue.popleft()
                if job.finding is None:
                    self.forks.append(_ForkRef(job))
                else:
                    job.outstanding.discard("reference")
        elif self.ref_queue or (self.can_prepare() and not self.to_send):
            # Without fork, the reference is built here, one at a time between collections.
            if not self.ref_queue:
                self.prepare_one()
                return
            job = self.ref_queue.popleft()
            if job.finding is not None:
                return
            try:
                with _time_limit(self.ctx.timeout):
                    result = job.reference_work()
            except _Overtime as e:
                result = {"failed": _failure(e, "building it", self.ctx.timeout)}
            self.on_result(job, "reference", result)

    # -- waiting

    def collect(self, timeout: float) -> None:
        busy = {id(w.inp): w for w in self.workers if w.task is not None}
        forks = {id(f.inp): f for f in self.forks}
        if not busy and not forks:
            return
        now = time.perf_counter()
        starts = [w.started for w in busy.values()] + [f.started for f in forks.values()]
        soonest = min(starts) + self.ctx.timeout
        conns = [w.inp for w in busy.values()] + [f.inp for f in forks.values()]
        for conn in wait(conns, max(0.0, min(timeout, soonest - now))):
            if id(conn) in forks:
                self.fork_done(forks[id(conn)])
            else:
                self.worker_ready(busy[id(conn)])
        now = time.perf_counter()
        for worker in list(busy.values()):
            if worker.task is not None and now - worker.started > self.ctx.timeout:
                self.replace(
                    worker,
                    {
                        "timeout": f"the rebuild in a {worker.label} did not finish within "
                        f"{self.ctx.timeout:g} s (the worker was killed and replaced)",
                        "error": worker.stderr_tail(),
                    },
                )
        for fork in list(self.forks):
            if now - fork.started > self.ctx.timeout:
                fork.kill()
                self.forks.remove(fork)
                failed = {
                    "status": TIMEOUT,
                    "reason": f"building and rolling it out here did not finish within "
                    f"{self.ctx.timeout:g} s",
                }
                self.on_result(fork.job, "reference", {"failed": failed})

    def worker_ready(self, worker: _Worker) -> None:
        try:
            _key, result = worker.receive()
        except (EOFError, OSError, pickle.UnpicklingError):
            code = worker.exitcode()
            tail = worker.stderr_tail()
            msg = f"the worker process died (exit code {code}) while rebuilding it"
            self.replace(
                worker,
                {
                    "error": msg + (f"; its stderr ended with:\n{tail}" if tail else ""),
                    "summary": msg,
                },
            )
            return
        self.worker_done(worker, result)

    def fork_done(self, fork: _ForkRef) -> None:
        self.forks.remove(fork)
        try:
            result = pickle.loads(fork.inp.recv_bytes())
        except Exception:  # noqa: BLE001 - the fork died before answering
            fork.proc.join(5)
            code = fork.proc.exitcode
            result = {
                "failed": {
                    "status": CAPTURE_ERROR,
                    "reason": f"building it here killed the process (exit code {code})",
                }
            }
        fork.kill()
        self.on_result(fork.job, "reference", result)

    # -- the loop

    def run(self) -> list[Finding]:
        try:
            self.workers = [self.new_worker() for _ in range(self.n)]
            while self.queue or self.to_send or self.ref_queue or self.forks or self.active:
                self.feed()
                self.start_references()
                self.feed()
                idle = not any(w.task is not None for w in self.workers) and not self.forks
                if idle and not self.to_send and not self.ref_queue and not self.can_prepare():
                    if self.queue:  # the cap is reached with nothing in flight
                        self.cap += self.n
                        continue
                    for job in list(self.active):  # nothing can arrive any more
                        job.outstanding.clear()
                        self.settle(job)
                    continue
                wait_for = 0.0 if (not self.fork_refs and self.ref_queue) else 0.25
                self.collect(wait_for)
        finally:
            for fork in self.forks:
                fork.kill()
            for worker in self.workers:
                worker.stop()
            for job in self.active:
                job.close()
        return [self.findings[i] for i in sorted(self.findings)]


def _versions() -> dict[str, str]:
    import platform

    from .. import __version__
    from ..versions import distribution_of

    out = {"python": platform.python_version(), "specpack": __version__}
    for mod in ("gymnasium", "numpy"):
        found = distribution_of(mod)
        if found:
            out[found[0]] = found[1]
    return out


REFERENCES = ("fork", "here")


def _check_options(
    where: str, steps: int, jobs: int | None, timeout: float, reference: str | None
) -> bool:
    """Validate the options; returns whether references are built in forks of this process."""
    if reference is not None and reference not in REFERENCES:
        raise SpecPackError(
            f"reference={reference!r} is not one of {', '.join(REFERENCES)} (or None: fork "
            "where the platform has it)"
        )
    if reference == "fork" and not _fork_available():
        raise SpecPackError("reference='fork' needs the fork start method; use reference='here'")
    if where not in WHERE:
        raise SpecPackError(f"where={where!r} is not one of {', '.join(WHERE)}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise SpecPackError(f"steps={steps!r} must be a non-negative int")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise SpecPackError(f"jobs={jobs!r} must be a positive int (or None for the CPU count)")
    if not isinstance(timeout, (int, float)) or not timeout > 0:
        raise SpecPackError(f"timeout={timeout!r} must be a positive number of seconds")
    # fork is safe enough for this on Linux; on macOS system frameworks may crash a fork child.
    default_fork = sys.platform.startswith("linux") and _fork_available()
    return reference == "fork" or (reference is None and default_fork)


def audit(
    targets: str | Sequence[str] = (),
    imports: Sequence[str] = (),
    wrappers: bool | Literal["only"] = False,
    where: str = "subprocess",
    steps: int = 50,
    seed: int = 0,
    jobs: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    *,
    reference: str | None = None,
    progress: Callable[[Finding, int, int], None] | None = None,
) -> AuditReport:
    """Check that every selected env (and wrapper) survives a process boundary.

    ``targets`` are env ids, namespaces (``"ALE/"``), entry-point module prefixes
    (``"minigrid"``; imported if nothing matches yet), or nothing for the whole registry after
    importing ``imports``. ``wrappers=True`` adds every wrapper class of ``gymnasium.wrappers``
    and of the imported modules (``"only"``: wrappers alone). Each env is captured and built
    here, rebuilt in one of ``jobs`` fresh long-lived workers (``where``: a fresh ``python``,
    or spawn/forkserver) and compared over a ``steps``-step rollout seeded with ``seed``; an env
    that takes longer than ``timeout`` seconds is killed with its worker.

    The reference side (build, argument-coverage checks, rollout) runs in short-lived forks of
    this process (``reference="fork"``, the default on Linux): they share
    everything this process did (imports, registrations, module globals, hash seed) and keep
    a hanging reference from stalling the audit; ``reference="here"`` builds them in this
    process, one at a time. ``progress`` is called with each finding and the counts
    done/total. Example::

        report = specpack.audit(["minigrid"], steps=20)
        assert report, str(report)

    Bad input (an unknown target, a failing import, bad options) raises a
    :class:`~specpack.errors.SpecPackError`; what the envs do is reported, never raised.
    """
    fork_refs = _check_options(where, steps, jobs, timeout, reference)
    start = time.perf_counter()
    if isinstance(targets, str):
        targets = [targets]
    imported = _import_all(list(imports))
    env_ids = [] if wrappers == "only" else _select(list(targets), imported)
    tmp = tempfile.mkdtemp(prefix="specpack-audit-")
    ctx = _Context(steps=steps, seed=seed, timeout=float(timeout), where=where, tmp=tmp)
    job_list: list[_Job] = [_EnvJob(i, ctx) for i in env_ids]
    if wrappers:
        bases = _package_bases(imported)
        job_list += [_WrapperJob(n, c, ctx, bases) for n, c in _wrapper_classes(imported)]
    n_workers = max(1, min(jobs or os.cpu_count() or 1, len(job_list) or 1))
    total = len(job_list)
    done = [0]

    def on_done(f: Finding) -> None:
        done[0] += 1
        if progress is not None:
            progress(f, done[0], total)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler = _Scheduler(job_list, n_workers, ctx, on_done, fork_refs)
            findings = scheduler.run() if job_list else []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return AuditReport(
        envs=[f for f in findings if f.kind == "env"],
        wrappers=[f for f in findings if f.kind == "wrapper"],
        elapsed=time.perf_counter() - start,
        where=where,
        steps=steps,
        seed=seed,
        jobs=n_workers,
        timeout=float(timeout),
        versions=_versions(),
    )


def audit_one(
    target: Any,
    *,
    steps: int = 50,
    seed: int = 0,
    where: str = "subprocess",
    timeout: float = DEFAULT_TIMEOUT,
    reference: str | None = "here",
) -> Finding:
    """Audit a single env given as an id, a live env, an ``EnvSpec``, a class or a pack."""
    fork_refs = _check_options(where, steps, 1, timeout, reference)
    if isinstance(target, str):
        name = target
    else:
        spec = getattr(target, "spec", None)
        name = (
            getattr(spec, "id", None)
            or getattr(target, "label", None)
            or (getattr(target, "__qualname__", None) or type(target).__qualname__)
        )
    tmp = tempfile.mkdtemp(prefix="specpack-audit-")
    ctx = _Context(steps=steps, seed=seed, timeout=float(timeout), where=where, tmp=tmp)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            job = _EnvJob(str(name), ctx, target=target)
            return _Scheduler([job], 1, ctx, None, fork_refs).run()[0]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- showing -------------------------------------------------------------------------------------


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _more(f: Finding, indent: int, limit: int = 5) -> list[str]:
    """The differences after the first (the reason), indented, at most ``limit``."""
    rest = list(f.differences[1:])
    out = [f"{' ' * indent}- {_clip(d, 160)}" for d in rest[:limit]]
    if len(rest) > limit:
        out.append(f"{' ' * indent}  ... and {len(rest) - limit} more (see --json)")
    return out


def summary(report: AuditReport) -> str:
    """The human summary: counts per status, what is not portable, missing packages."""
    lines: list[str] = []
    n = len(report.envs)
    head = (
        f"{report.jobs} {report.where} worker{'s' if report.jobs != 1 else ''}, "
        f"{report.steps} steps, seed {report.seed}"
    )
    lines.append(
        f"specpack audit: {n} env{'s' if n != 1 else ''}"
        + (f" and {len(report.wrappers)} wrappers" if report.wrappers else "")
        + f" in {report.elapsed:.1f} s ({head})"
    )
    if report.envs:
        lines.append("")
        lines.append(f"  {'status':<20} {'envs':>5}")
        for status, count in report.counts("env").items():
            lines.append(f"  {status:<20} {count:>5}")
        bad = [f for f in report.envs if not f.portable]
        if bad:
            lines.append("")
            lines.append(f"not portable ({len(bad)}):")
            width = max(len(f.name) for f in bad)
            for f in bad:
                lines.append(f"  {f.name:<{width}}  {f.status:<14} {_clip(f.reason, 160)}")
                lines += _more(f, 6)
        missing: dict[str, list[str]] = {}
        for f in report.envs:
            if f.status == MISSING_DEPENDENCY:
                missing.setdefault(f.package or "unknown", []).append(f.name)
        if missing:
            lines.append("")
            lines.append(f"missing dependencies (skipped, {sum(map(len, missing.values()))} envs):")
            for pkg, names in sorted(missing.items()):
                shown = ", ".join(names[:4]) + (
                    f", ... ({len(names)} envs)" if len(names) > 4 else ""
                )
                lines.append(f"  {pkg}: {shown}")
    if report.wrappers:
        lines.append("")
        lines.append(
            "wrappers (arguments given; '*' marks a wrapper that records them faithfully):"
        )
        width = max(len(f.name) for f in report.wrappers)
        for f in report.wrappers:
            mark = "*" if f.status == IDENTICAL else " "
            args = ", ".join(f"{k}={v}" for k, v in f.args.items()) or "-"
            lines.append(f" {mark}{f.name:<{width}}  {f.status:<18} {_clip(args, 80)}")
            if f.status != IDENTICAL:
                lines.append(f"      - {_clip(f.reason, 160)}")
                lines += _more(f, 6)
        counts = ", ".join(f"{k} {v}" for k, v in report.counts("wrapper").items() if v)
        lines.append(f"  ({counts})")
    lines.append("")
    lines.append(
        "portable"
        if report.portable
        else f"NOT portable: {len(report.failures)} finding(s) fail the audit"
    )
    return "\n".join(lines)


class _Progress:
    """A one-line progress bar on a terminal's stderr."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.start = time.perf_counter()
        self.last = 0.0
        self.bad = 0

    def __call__(self, finding: Finding, done: int, total: int) -> None:
        if not finding.portable:
            self.bad += 1
        now = time.perf_counter()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        width = 30
        filled = int(width * done / max(total, 1))
        bar = "#" * filled + "." * (width - filled)
        text = (
            f"\r[{bar}] {done}/{total}  {self.bad} not portable  "
            f"{now - self.start:5.1f} s  {_clip(finding.name, 40):<40}"
        )
        self.stream.write(text)
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


# -- the command line ----------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="specpack audit",
        description="Find every env (and wrapper) that does not survive a process boundary: "
        "capture here, rebuild in fresh workers, compare.",
    )
    p.add_argument(
        "targets",
        nargs="*",
        metavar="TARGET",
        help="env id, namespace ('ALE/'), or entry-point module prefix ('minigrid'); "
        "none: the whole registry",
    )
    p.add_argument(
        "--import",
        dest="imports",
        nargs="+",
        default=[],
        metavar="MODULE",
        action="extend",
        help="import these modules first (they register envs)",
    )
    p.add_argument(
        "--wrappers",
        action="store_true",
        help="also audit every wrapper class of gymnasium.wrappers and the imports",
    )
    p.add_argument("--wrappers-only", action="store_true", help="audit the wrappers alone")
    p.add_argument(
        "--where",
        choices=WHERE,
        default="subprocess",
        help="kind of worker process (default: a fresh python)",
    )
    p.add_argument("--steps", type=int, default=50, help="rollout length (default 50)")
    p.add_argument("--seed", type=int, default=0, help="rollout seed (default 0)")
    p.add_argument(
        "--jobs", type=int, default=None, help="number of worker processes (default: the CPU count)"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds per env before its worker is killed (default {DEFAULT_TIMEOUT:g})",
    )
    p.add_argument(
        "--reference",
        choices=REFERENCES,
        default=None,
        help="where the reference is built: in forks of this process (the default on Linux) "
        "or here, one at a time",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    return p


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[int | None]:
    """Send anything the envs print (also from C) to stderr; yields a dup of the real stdout."""
    try:
        sys.stdout.flush()
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        with contextlib.redirect_stdout(sys.stderr):
            yield None
        return
    saved = os.dup(fd)
    os.dup2(sys.stderr.fileno(), fd)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield saved
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os.dup2(saved, fd)
        os.close(saved)


def audit_main(argv: list[str]) -> int:
    """``specpack audit ...``: 0 when everything is portable, 1 when not, 2 on bad input."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else 2
    wrappers: bool | Literal["only"] = "only" if args.wrappers_only else bool(args.wrappers)
    if wrappers == "only" and args.targets:
        print("specpack audit: error: --wrappers-only takes no TARGET", file=sys.stderr)
        return 2
    show = _Progress(sys.stderr) if sys.stderr.isatty() and not args.json else None
    try:
        with _stdout_to_stderr():
            report = audit(
                args.targets,
                imports=args.imports,
                wrappers=wrappers,
                where=args.where,
                steps=args.steps,
                seed=args.seed,
                jobs=args.jobs,
                timeout=args.timeout,
                reference=args.reference,
                progress=show,
            )
    except SpecPackError as e:
        print(f"specpack audit: error: {e}", file=sys.stderr)
        return 2
    print(report.to_json() if args.json else summary(report))
    sys.stdout.flush()
    return 0 if report.portable else 1
