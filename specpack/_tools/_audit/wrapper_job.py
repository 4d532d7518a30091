"""Auditing one wrapper class: :func:`reference` builds it around a base env with non-default
arguments (:mod:`.wrapper_fixtures`), checks its record against them, captures it, probes what
it shows of each argument and records a rollout; :func:`rebuild` does the same from the pickled
capture."""

from __future__ import annotations

import importlib
import inspect
import pickle
from collections.abc import Sequence
from typing import Any

from ..._core._backends.recorders import recorder_for
from ..._core._capture import capture
from ..._core._errors import UnrecordedArgumentsError
from ..._core._exact.describe import plain
from ..._core._process.protocol import Outcome
from ..._core._text import one_line, short
from .._verify.compare import same
from .._verify.jobs import carried_exactly
from .._verify.trace import Trace, plan_actions, record, writable
from .classify import failure, guard, missing_package, raised, rollout_missing
from .control import CONFIRM_BUILDS, close_quietly, trace_differences
from .control import confirm as confirm_builds
from .jobs import REFERENCE, REMOTE, Context, Decided, Job, private_tmp
from .report import MISSING_DEPENDENCY, NOT_COMPARED, NOT_IDENTICAL, SKIPPED, Finding
from .wrapper_fixtures import arg_text, args_text, bases, candidates

__all__ = ["WrapperJob", "confirm", "probe", "rebuild", "record_check", "reference"]

REFERENCE_JOB = f"{__name__}:reference"
REBUILD_JOB = f"{__name__}:rebuild"
CONFIRM_WRAPPER_JOB = f"{__name__}:confirm"
_ABSENT = "<absent>"


def probe(env: Any, names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """What the outermost wrapper shows for each argument name: attribute, recorded value."""
    d = getattr(env, "__dict__", {})
    saved = getattr(env, "_saved_kwargs", None)
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        attr: Any = _ABSENT
        for key in (name, f"_{name}"):
            if key in d:
                attr = plain(d[key])
                break
        rec = plain(saved[name]) if isinstance(saved, dict) and name in saved else _ABSENT
        out[name] = {"attribute": attr, "recorded": rec}
    return out


def record_check(name: str, cls: type, live: Any, given: dict[str, Any],
                 defaulted: Any) -> list[str]:
    """The wrapper's record against the arguments it was given: its own (``_saved_kwargs``),
    else what a registered recorder reads from the instance (capture uses the same one)."""
    saved = getattr(live, "_saved_kwargs", None)
    if saved is None:
        recorder = recorder_for(cls)
        if recorder is not None:
            try:
                saved = dict(recorder(live))
            except Exception as e:  # noqa: BLE001 - a broken recorder is this wrapper's finding
                return [f"the recorder registered for {name} failed on an instance: "
                        f"{one_line(e)}"]
    if saved is None and not (given or defaulted):
        return []
    if saved is None:
        return [f"{name} does not inherit gymnasium.utils.RecordConstructorArgs: its arguments "
                "are not recorded, so env.spec cannot rebuild it"]
    out = []
    try:
        sig = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        sig = None  # type: ignore[assignment]
    for key, value in given.items():
        if key not in saved:
            param = sig.get(key) if sig is not None else None
            default = "?" if param is None or param.default is param.empty else short(param.default)
            out.append(f"{name} does not record {key} (given {short(value)}): a rebuild from "
                       f"its record uses the default {default}")
        elif not same(plain(saved[key]), plain(value)):
            out.append(f"{name} records {key}={short(saved[key])} but was given "
                       f"{key}={short(value)}")
    if sig is not None and not any(p.kind is p.VAR_KEYWORD for p in sig.values()):
        for key in saved:
            if key not in sig and key != "env":
                out.append(f"{name} records {key!r}, which its constructor does not take: a "
                           "rebuild from its record raises TypeError")
    return out


def probe_differences(here: dict[str, dict[str, Any]],
                      there: dict[str, dict[str, Any]]) -> list[str]:
    """An attribute or recorded value (:func:`probe`) the original shows and the rebuild not."""
    diffs = []
    for key, shown_here in here.items():
        seen_there = there.get(key, {})
        for what, verb in (("attribute", "has"), ("recorded", "records")):
            seen = seen_there.get(what, _ABSENT)
            shown = shown_here[what]
            absent = isinstance(shown, str) and shown == _ABSENT
            if not absent and not same(shown, seen):
                diffs.append(f"the rebuilt wrapper {verb} {key}={short(seen)} but the original "
                             f"{verb} {key}={short(shown)}")
    return diffs


def _load(name: str) -> type:
    module, _, attr = name.rpartition(".")
    cls: type = getattr(importlib.import_module(module), attr)
    return cls


def _build(cls: type, extra: Sequence[str], tmp: str) -> dict[str, Any]:
    """Build ``cls`` around a base env with guessed arguments; ``{"decided": ...}`` if not."""
    try:
        params = [p for p in inspect.signature(cls).parameters.values()
                  if p.name != "env" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    choices: dict[str, tuple[Any, ...]] = {}
    defaulted: dict[str, str] = {}
    for p in params:
        values, why = candidates(p, tmp)
        if values:
            choices[p.name] = values
        elif p.default is p.empty:
            reason = f"cannot guess a value for the argument {p.name!r}: {why}"
            return {"decided": {"status": SKIPPED, "reason": reason}}
        else:
            defaulted[p.name] = why or "left at its default"
    required = {p.name for p in params if p.default is p.empty}
    width = max((len(v) for v in choices.values()), default=1)
    attempts = [{k: v[min(i, len(v) - 1)] for k, v in choices.items()} for i in range(width)]
    fallback = {k: v for k, v in attempts[0].items() if k in required}
    if fallback != attempts[0]:
        attempts.append(fallback)
    errors: list[str] = []
    first: BaseException | None = None
    for base_name, builder in bases(cls.__name__, extra):
        for args in attempts:
            try:
                env = builder()
            except Exception as e:  # noqa: BLE001 - try the next base
                first = first or e
                errors.append(f"{base_name}: {one_line(e)}")
                break
            try:
                live = cls(env, **args)
            except Exception as e:  # noqa: BLE001 - try other values, then the next base
                first = first or e
                errors.append(f"{base_name} with {args_text(args)}: {one_line(e)}")
                close_quietly(env)
                continue
            defaulted.update({name: "left at its default: the non-default values were rejected "
                              f"({errors[-1]})" for name in choices if name not in args})
            return {"live": live, "base": base_name, "given": args, "defaulted": defaulted}
    assert first is not None
    package = missing_package(first)
    status = MISSING_DEPENDENCY if package is not None else SKIPPED
    reason = (f"needs {package}: {one_line(first)}" if package is not None
              else f"could not be built around any base env ({errors[0]})")
    detail = "\n".join(errors)
    return {"decided": {"status": status, "reason": reason, "package": package, "detail": detail}}


def reference(payload: bytes, *, name: str, extra: list[str], tmp: str, steps: int, seed: int,
              timeout: float) -> dict[str, Any]:
    """The reference side of one wrapper class (a job function; ``payload`` is unused):
    ``{"decided": {...}}`` (skipped, missing dependency, refused capture), or the pickled
    capture, the record check's differences, the probes and the rollout."""
    private_tmp()
    return guard("building it", timeout, lambda: _reference(name, extra, tmp, steps, seed))


def _reference(name: str, extra: list[str], tmp: str, steps: int, seed: int) -> dict[str, Any]:
    cls = _load(name)
    built = _build(cls, extra, tmp)
    if "decided" in built:
        return built
    live, given = built["live"], built["given"]
    out: dict[str, Any] = {
        "base": built["base"],
        "given": {k: arg_text(v) for k, v in given.items()},
        "defaulted": built["defaulted"],
        "differences": record_check(name, cls, live, given, built["defaulted"]),
    }
    try:
        try:
            pack = capture(live)
        except UnrecordedArgumentsError as e:
            diffs = [*out["differences"], f"capture(env) refuses: {e}"]
            out["decided"] = {"status": NOT_IDENTICAL, "reason": diffs[0], "differences": diffs}
            return out
        out["pack"] = pickle.dumps(pack, protocol=pickle.HIGHEST_PROTOCOL)
        out["probes"] = probe(live, list(given))
        actions = plan_actions(live.action_space, steps, seed)
        out["actions"] = actions if carried_exactly(actions) else None
        out["trace"] = record(live, writable(actions), seed).to_dict()
    finally:
        close_quietly(live)
    try:  # the local repeat control (a wall-clock time in info makes it not reproducible)
        second = _rollout(cls, extra, tmp, actions, len(actions), seed)
    except RuntimeError as e:
        out["repeat"] = [f"a second build here was not made: {e}"]
    else:
        out["repeat"] = trace_differences(out["trace"], second)
    return out


def _rollout(cls: type, extra: Sequence[str], tmp: str, actions: list[Any] | None, steps: int,
             seed: int) -> dict[str, Any]:
    """A clean build with the same arguments, rolled out with ``actions`` (None: planned from
    the build); raises when it cannot be built."""
    again = _build(cls, extra, tmp)
    if "decided" in again:
        raise RuntimeError(again["decided"].get("reason", "?"))
    live = again["live"]
    try:
        todo = plan_actions(live.action_space, steps, seed) if actions is None else actions
        return record(live, writable(todo), seed).to_dict()
    finally:
        close_quietly(live)


def confirm(payload: bytes, *, name: str, extra: list[str], tmp: str, trace: dict[str, Any],
            actions: list[Any] | None, steps: int, seed: int, budget: float) -> dict[str, Any]:
    """The confirmation of a wrapper whose rebuild's rollout differs (a job function;
    ``payload`` is unused): the repeat control's clean builds against ``trace``."""
    private_tmp()
    cls = _load(name)
    return confirm_builds(trace, lambda: _rollout(cls, extra, tmp, actions, steps, seed),
                          CONFIRM_BUILDS, budget)


def rebuild(payload: bytes, *, steps: int, seed: int, probes: list[str],
            actions: list[Any] | None) -> dict[str, Any]:
    """The remote side of one wrapper class (a job function): rebuild, probe, record with the
    reference's actions (or, when they could not be sent, ones planned the same way here)."""
    env = pickle.loads(payload).make()
    try:
        seen = probe(env, probes)
        todo = plan_actions(env.action_space, steps, seed) if actions is None else actions
        return {"probes": seen, "trace": record(env, writable(todo), seed).to_dict()}
    finally:
        close_quietly(env)


class WrapperJob(Job):
    """A wrapper class: its reference task, then the remote rebuild."""

    kind = "wrapper"

    def __init__(self, name: str, cls: type | BaseException, ctx: Context,
                 extra: list[str]) -> None:
        super().__init__(name, ctx)
        self.cls = cls
        self.extra = extra
        self.base: str | None = None
        self.given: dict[str, str] = {}
        self.defaulted: dict[str, str] = {}
        self.ref: dict[str, Any] = {}
        self.there: Any = None

    def finish(self, status: str, reason: str, **extra: Any) -> Finding:
        extra.setdefault("base_env", self.base)
        extra.setdefault("args", dict(self.given))
        extra.setdefault("defaulted", dict(self.defaulted))
        return super().finish(status, reason, **extra)

    def prepare(self) -> None:
        if isinstance(self.cls, BaseException):
            raise Decided(self.finish_failure(failure(self.cls, "importing it", self.ctx.timeout)))
        self.add_task("reference", REFERENCE, REFERENCE_JOB, b"", name=self.name,
                      extra=list(self.extra), tmp=self.ctx.tmp, steps=self.ctx.steps,
                      seed=self.ctx.seed, timeout=self.ctx.timeout)

    def forget_remote(self) -> None:
        self.there = None

    def take(self, label: str, outcome: Outcome) -> None:
        if label == "confirm":
            self.take_confirmation(outcome)
            return
        if label == "rebuild":
            self.there = self.value(outcome, REMOTE)
            if self.confirmed is None and self.rollout_differences():
                self.add_task(
                    "confirm", REFERENCE, CONFIRM_WRAPPER_JOB, b"", name=self.name,
                    extra=list(self.extra), tmp=self.ctx.tmp, trace=self.ref["trace"],
                    actions=self.ref["actions"], steps=self.ctx.steps, seed=self.ctx.seed,
                    budget=self.ctx.timeout / 2)
            return
        ref = self.value(outcome, REFERENCE)
        self.base = ref.get("base")
        self.given = dict(ref.get("given", {}))
        self.defaulted = dict(ref.get("defaulted", {}))
        decided = ref.get("decided")
        if decided is not None:
            raise Decided(self.finish(
                decided["status"], decided["reason"],
                differences=tuple(decided.get("differences", ())),
                package=decided.get("package"), detail=decided.get("detail", "")))
        self.ref = ref
        self.repeated(list(ref.get("repeat") or ()), list(ref.get("differences") or ()), None)
        error = Trace.from_dict(ref["trace"]).error
        missing = None if error is None else rollout_missing(error)
        if error is not None and missing is not None:
            raise Decided(self.finish(MISSING_DEPENDENCY, f"needs {missing}: the rollout here "
                                      f"raised {raised(error)}", package=missing))
        self.add_task("rebuild", REMOTE, REBUILD_JOB, ref["pack"], steps=self.ctx.steps,
                      seed=self.ctx.seed, probes=list(self.given), actions=ref["actions"])

    def raised_alike(self, error: dict[str, Any]) -> Finding:
        """``not_compared``: the base env and arguments are the audit's guesses, so a rollout
        that raised alike on both sides is not the wrapper's to answer for."""
        return self.finish(NOT_COMPARED, f"the rollout around {self.base} with the guessed "
                           f"arguments raised {raised(error)} on both sides alike, so it was not "
                           "compared; the wrapper's record and attributes match",
                           step=error.get("step"))

    def rollout_differences(self) -> list[str]:
        """What differs between the reference's rollout and the rebuild's."""
        return trace_differences(self.ref["trace"], self.there["trace"],
                                 ("here", self.ctx.remote_label))

    def verdict(self) -> Finding:
        record = [*self.ref["differences"],
                  *probe_differences(self.ref["probes"], self.there["probes"])]
        rollout = self.rollout_differences()
        confirmed = self.confirmed_verdict(record, rollout, None)
        if confirmed is not None:
            return confirmed
        here_trace, there_trace = (Trace.from_dict(d["trace"]) for d in (self.ref, self.there))
        uncompared = here_trace.nondeterministic or there_trace.nondeterministic
        judged = self.judge(record + rollout, None, here_trace.error, uncompared)
        return self.confirmation_noted(judged, rollout)
