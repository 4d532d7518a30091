"""Auditing one wrapper class: build it with guessed arguments, rebuild it across the boundary.

The reference side (:func:`reference`, a job function run where the class is importable with
this process's state) builds the wrapper around a base env with non-default arguments
(:mod:`.wrapper_fixtures`), checks its own record (``_saved_kwargs``) against them, captures
the live instance, reads what it shows for each argument and records a rollout. The remote side
(:func:`rebuild`) rebuilds the pickled capture, reads the same attributes and records the same
rollout; the verdict compares both.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import pickle
from collections.abc import Sequence
from typing import Any

from .._backends.recorders import recorder_for
from .._capture import capture
from .._errors import UnrecordedArgumentsError
from .._process import Outcome
from .._text import one_line, short
from .._verify import Trace, compare, plain, plan_actions, record, same, writable
from .._verify.jobs import carried_exactly
from .checks import first_step
from .classify import failure, missing_package, raised, rollout_missing
from .jobs import REFERENCE, REMOTE, Context, Decided, Job, private_tmp
from .report import (
    MISSING_DEPENDENCY,
    NOT_COMPARED,
    NOT_IDENTICAL,
    NOT_REPRODUCIBLE,
    SKIPPED,
    Finding,
)
from .wrapper_fixtures import arg_text, args_text, bases, candidates

__all__ = ["WrapperJob", "probe", "rebuild", "record_check", "reference"]

REFERENCE_JOB = f"{__name__}:reference"
REBUILD_JOB = f"{__name__}:rebuild"
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


def _load(name: str) -> type:
    module, _, attr = name.rpartition(".")
    cls: type = getattr(importlib.import_module(module), attr)
    return cls


def _params(cls: type) -> list[inspect.Parameter]:
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return []
    skip = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [p for p in params if p.name != "env" and p.kind not in skip]


def _build(cls: type, extra: Sequence[str], tmp: str) -> dict[str, Any]:
    """Build ``cls`` around a base env with guessed arguments; ``{"decided": ...}`` if not."""
    params = _params(cls)
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
                with contextlib.suppress(Exception):
                    env.close()
                continue
            for name in choices:
                if name not in args:
                    defaulted[name] = (
                        f"left at its default: the non-default values were rejected ({errors[-1]})"
                    )
            return {"live": live, "base": base_name, "given": args, "defaulted": defaulted}
    assert first is not None
    package = missing_package(first)
    status = MISSING_DEPENDENCY if package is not None else SKIPPED
    reason = (
        f"needs {package}: {one_line(first)}"
        if package is not None
        else f"could not be built around any base env ({errors[0]})"
    )
    detail = "\n".join(errors)
    return {"decided": {"status": status, "reason": reason, "package": package, "detail": detail}}


def record_check(
    name: str, cls: type, live: Any, given: dict[str, Any], defaulted: Any
) -> list[str]:
    """The wrapper's record against the arguments it was given: its own (``_saved_kwargs``,
    from ``RecordConstructorArgs``), else what a registered recorder reads from the instance
    (:func:`specpack.register_recorder`; capture uses the same one, so a wrapper a recorder
    covers is faithful)."""
    saved = getattr(live, "_saved_kwargs", None)
    if saved is None:
        recorder = recorder_for(cls)
        if recorder is not None:
            try:
                saved = dict(recorder(live))
            except Exception as e:  # noqa: BLE001 - a broken recorder is this wrapper's finding
                return [f"the recorder registered for {name} failed on an instance: "
                        f"{one_line(e)}"]
    if saved is None:
        if given or defaulted:
            return [
                f"{name} does not inherit gymnasium.utils.RecordConstructorArgs: its arguments "
                "are not recorded, so env.spec cannot rebuild it"
            ]
        return []
    out = []
    try:
        sig = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        sig = None  # type: ignore[assignment]
    for key, value in given.items():
        if key not in saved:
            param = sig.get(key) if sig is not None else None
            default = "?" if param is None or param.default is param.empty else short(param.default)
            out.append(
                f"{name} does not record {key} (given {short(value)}): a rebuild from its "
                f"record uses the default {default}"
            )
        elif not same(plain(saved[key]), plain(value)):
            out.append(
                f"{name} records {key}={short(saved[key])} but was given {key}={short(value)}"
            )
    if sig is not None and not any(p.kind is p.VAR_KEYWORD for p in sig.values()):
        for key in saved:
            if key not in sig and key != "env":
                out.append(
                    f"{name} records {key!r}, which its constructor does not take: a rebuild "
                    "from its record raises TypeError"
                )
    return out


def reference(
    payload: bytes, *, name: str, extra: list[str], tmp: str, steps: int, seed: int, timeout: float
) -> dict[str, Any]:
    """The reference side of one wrapper class (a job function; ``payload`` is unused).

    Returns ``{"decided": {...}}`` (skipped, missing dependency, refused capture) or the
    pickled capture, the record check's differences, the probes and the rollout.
    """
    private_tmp()
    try:
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
            with contextlib.suppress(Exception):
                live.close()
        out["repeat"] = _repeat(cls, extra, tmp, Trace.from_dict(out["trace"]), actions, seed)
        return out
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return {"failed": failure(e, "building it", timeout)}


def _repeat(cls: type, extra: Sequence[str], tmp: str, first: Trace, actions: list[Any],
            seed: int) -> list[str]:
    """The local repeat control: a second build with the same arguments, the same actions;
    what differs from the first (an info item that holds a wall-clock time, a random seed
    drawn at construction) makes the wrapper ``not_reproducible`` here."""
    again = _build(cls, extra, tmp)
    if "decided" in again:
        return [f"a second build here was not made: {again['decided'].get('reason', '?')}"]
    live = again["live"]
    try:
        second = record(live, writable(actions), seed)
    finally:
        with contextlib.suppress(Exception):
            live.close()
    return compare(first, second, labels=("the first build here", "the second"), shared=False)


def rebuild(
    payload: bytes, *, steps: int, seed: int, probes: list[str], actions: list[Any] | None
) -> dict[str, Any]:
    """The remote side of one wrapper class (a job function): rebuild, probe, record with the
    reference's actions (or, when they could not be sent, ones planned the same way here)."""
    env = pickle.loads(payload).make()
    try:
        seen = probe(env, probes)
        todo = plan_actions(env.action_space, steps, seed) if actions is None else actions
        return {"probes": seen, "trace": record(env, writable(todo), seed).to_dict()}
    finally:
        with contextlib.suppress(Exception):
            env.close()


class WrapperJob(Job):
    """A wrapper class: its reference task, then the remote rebuild."""

    kind = "wrapper"

    def __init__(
        self, name: str, cls: type | BaseException, ctx: Context, extra: list[str]
    ) -> None:
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
        self.add_task(
            "reference",
            REFERENCE,
            REFERENCE_JOB,
            b"",
            name=self.name,
            extra=list(self.extra),
            tmp=self.ctx.tmp,
            steps=self.ctx.steps,
            seed=self.ctx.seed,
            timeout=self.ctx.timeout,
        )

    def forget_remote(self) -> None:
        self.there = None

    def take(self, label: str, outcome: Outcome) -> None:
        if label == "rebuild":
            self.there = self.value(label, outcome, REMOTE)
            return
        ref = self.value(label, outcome, REFERENCE)
        self.base = ref.get("base")
        self.given = dict(ref.get("given", {}))
        self.defaulted = dict(ref.get("defaulted", {}))
        decided = ref.get("decided")
        if decided is not None:
            raise Decided(
                self.finish(
                    decided["status"],
                    decided["reason"],
                    differences=tuple(decided.get("differences", ())),
                    package=decided.get("package"),
                    detail=decided.get("detail", ""),
                )
            )
        self.ref = ref
        repeat = list(ref.get("repeat") or ())
        record = list(ref.get("differences") or ())
        if repeat and record:
            # A wrong record is wrong whatever the rollouts do: it is what make(env.spec)
            # rebuilds from. Say it first; the repeat control's finding follows.
            raise Decided(self.finish(
                NOT_IDENTICAL, record[0], differences=(
                    *record, "its rollouts are not reproducible here either (two builds in this "
                    f"process already differ): {repeat[0]}")))
        if repeat:
            raise Decided(self.finish(
                NOT_REPRODUCIBLE,
                "two builds in this process already differ, so a rebuild elsewhere cannot be "
                f"compared with them: {repeat[0]}", differences=tuple(repeat),
                step=first_step(repeat)))
        steps, seed = self.ctx.steps, self.ctx.seed
        error = Trace.from_dict(ref["trace"]).error
        missing = None if error is None else rollout_missing(error)
        if error is not None and missing is not None:
            raise Decided(self.finish(MISSING_DEPENDENCY, f"needs {missing}: the rollout here "
                                      f"raised {raised(error)}", package=missing))
        self.add_task(
            "rebuild", REMOTE, REBUILD_JOB, ref["pack"], steps=steps, seed=seed,
            probes=list(self.given), actions=ref["actions"],
        )

    def raised_alike(self, error: dict[str, Any]) -> Finding:
        """A wrapper's rollout that raised the same on both sides is ``not_compared``: the base
        env and arguments are the audit's guesses, so the failure is not the wrapper's to
        answer for; its record and attributes were compared and matched."""
        return self.finish(
            NOT_COMPARED,
            f"the rollout around {self.base} with the guessed arguments raised {raised(error)} "
            "on both sides alike, so it was not compared; the wrapper's record and attributes "
            "match",
            step=error.get("step"),
        )

    def verdict(self) -> Finding:
        diffs = list(self.ref["differences"])
        there_probes = self.there["probes"]
        for key, here in self.ref["probes"].items():
            there = there_probes.get(key, {})
            for what, verb in (("attribute", "has"), ("recorded", "records")):
                seen = there.get(what, _ABSENT)
                shown = here[what]
                absent = isinstance(shown, str) and shown == _ABSENT
                if not absent and not same(shown, seen):
                    diffs.append(
                        f"the rebuilt wrapper {verb} {key}={short(seen)} but the original "
                        f"{verb} {key}={short(shown)}"
                    )
        here_trace = Trace.from_dict(self.ref["trace"])
        there_trace = Trace.from_dict(self.there["trace"])
        labels = ("here", self.ctx.remote_label)
        diffs += compare(here_trace, there_trace, labels=labels, shared=False)
        uncompared = here_trace.nondeterministic or there_trace.nondeterministic
        return self.judge(diffs, None, here_trace.error, uncompared)
