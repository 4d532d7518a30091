"""Auditing one env: the capture here, :func:`reference` where it is registered (the
constructor-argument checks and the repeat control), the engine's ``run_trace`` in a fresh
worker beside verify's hash control, and a confirmation of a rebuild that differs (the steps and
what each verdict means: docs/audit.md, "How it works")."""

from __future__ import annotations

import pickle
from dataclasses import replace
from typing import Any

import gymnasium

from ..._core._capture import capture
from ..._core._process.protocol import Outcome
from .._verify.compare import compare
from .._verify.generators import Watch, drawn, generator_finding
from .._verify.jobs import RUN_JOB, carried_exactly, multi_agent
from .._verify.report import GLOBAL_GENERATOR, HASH_ORDER
from .._verify.trace import Trace, plan_actions
from .checks import ezpickle_gaps, first_step, live_capture
from .classify import failure, guard, raised, rollout_missing, time_limit, unset_required
from .control import CONFIRM_JOB, Build, clean_build, close_quietly, control, trace_of, watched_make
from .jobs import CONTROL, REFERENCE, REMOTE, Context, Decided, Job, private_tmp
from .report import MISSING_DEPENDENCY, UNSEEDED, Finding
from .select import entry_of
from .vector_job import REFERENCE_VECTOR_JOB, RUN_VECTOR_JOB, sub_envs

__all__ = ["EnvJob", "reference"]

#: This module's job function, as workers import it.
REFERENCE_JOB = f"{__name__}:reference"


def reference(payload: bytes, *, steps: int, seed: int, live: bool, timeout: float,
              needs: list[str], name: str) -> dict[str, Any]:
    """The reference side of one env (a job function): ``{"failed": ...}``, or
    :func:`.control.control`'s answer with the ``actions`` both sides run (None when typed JSON
    cannot carry them exactly), ``gaps`` and ``live`` (the checks' findings)."""
    private_tmp()
    return guard("building it", timeout, lambda: _reference(payload, steps, seed, live),
                 needs, name)


def _reference(payload: bytes, steps: int, seed: int, live: bool) -> dict[str, Any]:
    pack = pickle.loads(payload)
    env, made = watched_make(pack.make)
    first: Build | None = None
    try:
        multi = multi_agent(env)
        actions = (multi.plan_actions(env, steps, seed) if multi is not None
                   else plan_actions(env.action_space, steps, seed))
        checked = live_capture(env, pack) if live else None
        # A PettingZoo env's EzPickle record is checked by the live capture (its factory
        # re-applies the wrappers EzPickle would not carry); the gymnasium check reads a spec.
        gaps = (ezpickle_gaps(env, pack, actions, seed) if multi is None
                else {"failures": [], "notes": [], "step": None})
        if not gaps["failures"]:  # only a gap's round trip steps the env: it is unstepped
            # the checks' own builds and reads are not the env's rollout: watched anew
            watch = Watch()
            first = Build(trace_of(env, actions, steps, seed, watch),
                          [*made.touches, *watch.touches])
    finally:
        close_quietly(env)
    sent = actions if carried_exactly(actions) else None

    def again() -> Build:
        return clean_build(payload, sent, steps, seed)

    result = control(again(), again, checked=False) if first is None else control(first, again)
    return {**result, "actions": sent, "gaps": gaps, "live": checked}


def traces(value: Any) -> list[Trace]:
    """The traces in a ``run_trace`` value (as a worker sent them back)."""
    return [Trace.from_dict(d) for d in value["traces"]]


class EnvJob(Job):
    """One env: the capture here, the reference task, then the remote task(s)."""

    kind = "env"

    def __init__(self, name: str, ctx: Context, target: Any = None) -> None:
        super().__init__(name, ctx)
        self.target = name if target is None else target
        self.check_live = not isinstance(self.target, gymnasium.Env)
        self.needs: list[str] = []
        self.payload = b""
        self.run_job = RUN_JOB
        self.extra: dict[str, Any] = {}
        self.here: Any = None
        self.gaps: dict[str, Any] = {}
        self.live_differences: list[str] = []
        self.live_ezpickle: list[str] = []
        self.live_failures: list[str] = []
        self.results: dict[str, Any] = {}
        self.nondeterministic = False
        self.run_params: dict[str, Any] = {}  # the rollout both sides ran (for confirm)
        self.control: Outcome | None = None  # the hash control's rollout (see Context)

    def prepare(self) -> None:
        if isinstance(self.target, str):
            entry = entry_of(self.target)
            if entry is not None:
                self.needs = unset_required(*entry)
        try:
            with time_limit(self.ctx.timeout):
                pack = capture(self.target)
                self.payload = pickle.dumps(pack, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            found = failure(e, "capturing it", self.ctx.timeout, self.needs, self.name)
            raise Decided(self.finish_failure(found)) from None
        self.notes.extend(pack.notes)
        self.nondeterministic = bool(pack.nondeterministic)
        function = REFERENCE_JOB
        if getattr(pack, "vector", False):
            function, self.run_job = REFERENCE_VECTOR_JOB, RUN_VECTOR_JOB
            n = sub_envs(self.name)
            self.extra = {"num_envs": n}
            built = (f"specpack.make_vec(pack, {n})" if n is not None else
                     "its vector creator with its own num_envs (its default is None)")
            self.notes.append(f"vector-only (a vector_entry_point and no entry_point): audited "
                              f"as {built} on both sides")
        self.add_task("reference", REFERENCE, function, self.payload, steps=self.ctx.steps,
                      seed=self.ctx.seed, live=self.check_live, timeout=self.ctx.timeout,
                      needs=self.needs, name=self.name, **self.extra)

    def forget_remote(self) -> None:
        self.results = {}
        self.live_failures = []
        self.control = None

    def take(self, label: str, outcome: Outcome) -> None:
        if label == "confirm":
            self.take_confirmation(outcome)
        elif label == "reference":
            self.take_reference(self.value(outcome, REFERENCE))
        else:
            if label == "control":
                self.control = outcome  # a failure there is a finding (see hash_differences)
            elif label == "live" and outcome.status != "ok":
                self.live_failures.append(
                    f"rebuilt from capture(env) of a live instance: the rebuild in a "
                    f"{self.ctx.remote_label} failed ({outcome.error or outcome.status})")
            else:
                self.results[label] = self.value(outcome, REMOTE)
            if not self.outstanding:
                self.check_further()

    def take_reference(self, value: dict[str, Any]) -> None:
        """Decide on the reference side's answer, or queue the remote tasks."""
        gaps, live = value["gaps"], value["live"]
        if live is not None:
            self.live_differences = list(live["differences"])
            self.live_ezpickle = list(live.get("ezpickle") or ())
            self.notes.extend(live.get("notes") or ())
        record = [*gaps["failures"], *self.live_ezpickle, *self.live_differences]
        unseeded = drawn(value.get("unseeded"))
        if unseeded is not None and not (
                self.nondeterministic or Trace.from_dict(value["trace"]).nondeterministic):
            raise Decided(self.generator_drawn(unseeded, list(value["repeat"]), record))
        self.repeated(list(value["repeat"]), record, gaps["step"] if gaps["failures"] else None,
                      ezpickle_only=not self.live_differences)
        first = self.here = Trace.from_dict(value["trace"])
        self.notes.extend(value["notes"])
        missing = None if first.error is None else rollout_missing(first.error)
        if first.error is not None and missing is not None:
            raise Decided(self.finish(
                MISSING_DEPENDENCY, f"needs {missing}: the rollout here raised "
                f"{raised(first.error)}", package=missing, step=first.error.get("step")))
        self.gaps = gaps
        self.notes.extend(gaps["notes"])
        params = {"steps": self.ctx.steps, "seed": self.ctx.seed, "actions": value["actions"]}
        self.run_params = params
        self.add_task("rebuild", REMOTE, self.run_job, self.payload, **params, **self.extra)
        if self.ctx.control_always:
            self.add_control()
        if live is not None and live["pack"] is not None:
            self.add_task("live", REMOTE, RUN_JOB, live["pack"], **params)

    def remote_differences(self) -> tuple[list[str], list[str]]:
        """What differs from the reference trace in the rebuild's rollout, and in the live
        instance's rebuild when it ran."""
        labels = ("here", self.ctx.remote_label)
        rebuilt = compare(self.here, traces(self.results["rebuild"])[0], labels=labels,
                          shared=False)
        if "live" not in self.results:
            return rebuilt, []
        here, there = (replace(t, spec={}) for t in (self.here, traces(self.results["live"])[0]))
        return rebuilt, [f"rebuilt from capture(env) of a live instance: {d}"
                         for d in compare(here, there, labels=labels, shared=False)]

    def add_control(self) -> None:
        """Queue the hash control (see :class:`.jobs.Context`); nothing where the remote
        side's hash seed is not set (spawn and forkserver children)."""
        if self.ctx.seeds.get("control") is None or "control" in self.outstanding:
            return
        self.add_task("control", CONTROL, self.run_job, self.payload, **self.run_params,
                      **self.extra)

    def check_further(self) -> None:
        """Once every remote task answered: a rebuild that differs gets the hash control and the
        confirmation, a control that differs the confirmation (chance is ruled out first, even
        in a reused worker)."""
        if "rebuild" not in self.results:
            return
        differ = any(self.remote_differences())
        if differ and self.control is None:
            self.add_control()
        if self.confirmed is None and (differ or self.hash_differences()):
            self.add_task("confirm", REFERENCE, CONFIRM_JOB, self.payload,
                          trace=self.here.to_dict(), run_job=self.run_job,
                          budget=self.ctx.timeout / 2, **self.run_params, **self.extra)

    def hash_differences(self) -> list[str]:
        """What differs between the rebuild and the hash control (``[]``: they agree, or the
        control did not run)."""
        control = self.control
        if control is None or "rebuild" not in self.results:
            return []
        a, b = self.ctx.seed_name("rebuild"), self.ctx.seed_name("control")
        if control.status in ("timeout", "died"):  # no evidence either way (a loaded machine)
            note = (f"the hash control ({b}) did not finish ({control.error or control.status}):"
                    " hash order was not ruled out")
            if note not in self.notes:
                self.notes.append(note)
            return []
        if control.status != "ok":
            return [f"the rebuild under {b} failed and the one under {a} did not: "
                    f"{control.error or control.status}"]
        try:
            other = traces(control.value)[0]
        except Exception as e:  # noqa: BLE001 - a broken answer is data, not a crash
            return [f"unreadable trace from the hash control ({type(e).__name__}: {e})"]
        return compare(traces(self.results["rebuild"])[0], other, labels=(a, b), shared=False)

    def hash_order(self, hashed: list[str], rest: list[str]) -> Finding:
        """``unseeded``: the env follows hash order; the reason names the fix."""
        a, b = self.ctx.seed_name("rebuild"), self.ctx.seed_name("control")
        reason = (
            f"two fresh interpreters that differ only in their hash seed ({a} and {b}) roll it "
            "out differently: the env follows hash order (the iteration order of a set of "
            "strings, hash() of a str or bytes), which differs from process to process unless "
            "PYTHONHASHSEED is set. Fix: set PYTHONHASHSEED (e.g. PYTHONHASHSEED=0) in the "
            "environment of every process that builds it, before Python starts (workers "
            f"inherit it), or make the env sort what it iterates: {hashed[0]}")
        return self.finish(UNSEEDED, reason, differences=(*hashed, *rest),
                           step=first_step(hashed), cause=HASH_ORDER)

    def generator_drawn(self, found: tuple[str, int, str], repeat: list[str],
                        record: list[str]) -> Finding:
        """``unseeded``: two builds here drew different values from a global generator
        (``found``), so no comparison of rollouts is a verdict."""
        reason = generator_finding(found)
        shown = [f"what the two builds here show: {d}" for d in repeat[:3]]
        call, step, _ = found
        return self.finish(UNSEEDED, reason, differences=(reason, *shown, *record),
                           step=None if call == "make" else step, cause=GLOBAL_GENERATOR)

    def verdict(self) -> Finding:
        rebuilt, live = self.remote_differences()
        ezpickle = [*self.gaps["failures"], *self.live_ezpickle]
        other = [*self.live_differences, *self.live_failures]
        record = [*ezpickle, *other]
        gap_step = self.gaps["step"] if self.gaps["failures"] else None
        # the confirmation ran for a rebuild that differs, or for a hash control that does
        differ, what = ((rebuilt + live, "") if rebuilt or live else
                        (self.hash_differences(), "the hash control"))
        confirmed = self.confirmed_verdict(record, differ, gap_step, ezpickle_only=not other,
                                           what=what)
        if confirmed is not None:
            return confirmed
        step = first_step(rebuilt)
        if step is None:
            step = gap_step
        there = traces(self.results["rebuild"])[0]
        uncompared = self.nondeterministic or self.here.nondeterministic or there.nondeterministic
        hashed = [] if uncompared else self.hash_differences()
        if hashed:
            return self.hash_order(hashed, [f"the rebuild here vs there: {d}"
                                            for d in rebuilt] + record + live)
        if ezpickle and not (rebuilt or other or live) and self.here.error is None:
            return self.ezpickle_gap(ezpickle, gap_step)
        judged = self.judge(rebuilt + record + live, step, self.here.error, uncompared)
        return self.confirmation_noted(judged, rebuilt + live)
