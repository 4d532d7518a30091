"""Auditing one env: capture here, a reference with a repeat control here, a remote rebuild.

1. **Capture** in the audit's process (``specpack.capture(id)``), after its imports.
2. **Reference** (:func:`reference`, a job function run in a ``fork`` worker that shares this
   process's state, or in this process): a first build plans the actions from its fresh action
   space, the EzPickle and live-stack checks read it (:mod:`.checks`), and it runs the rollout;
   a second, clean build runs the same actions: the *local repeat control*
   (:mod:`.control`). When the two differ the env is ``not_reproducible`` (with the first
   differing step) and nothing is sent across; a rollout that raised a missing dependency
   makes it ``missing_dependency``. The builds here watch the global generators (verify's
   :class:`~specpack._tools._verify.generators.Watch`, see :mod:`.control`): when two of them drew
   different values from one (``np.random.rand()``, ``random.random()``), the env is
   :data:`.findings.UNSEEDED` with the cause ``global_generator``, naming the call, the
   generator and the fix, and nothing is sent across: its rollout follows whatever state a
   process has, so any comparison would give a verdict by chance.
3. **Remote** (the engine's ``run_trace`` in a fresh worker): one build from the pickled pack,
   same actions, compared with the reference run. With it, the *hash control* (verify's, see
   :class:`.jobs.Context`): the same task in a fresh interpreter under the next
   ``PYTHONHASHSEED``, for every env when this process may use two CPUs, else for one whose
   rebuild differs. A control that differs from the rebuild makes the env
   :data:`.findings.UNSEEDED` (after the confirmation found no clean build here that
   differs).
4. **Confirmation** (only when a remote rollout differs from the reference): the two local
   builds may have agreed by chance, so up to :data:`.control.CONFIRM_BUILDS` more clean builds
   run on the reference side (:func:`.control.confirm_job`). One that differs makes the env
   ``not_reproducible`` (unless a record is wrong: see :meth:`EnvJob.verdict`). An EzPickle
   record that does not rebuild the env, with nothing else against the pack, is
   ``ezpickle_gap``; a live instance that cannot be captured is a note (the id's pack, which
   carries the registration itself, is what is judged).
   ``not_identical`` therefore always means "every build here agreed, the rebuild across the
   boundary differs" (or an EzPickle gap that changes the env); a rollout that raised the same
   on both sides is a ``rollout_error`` and a spec that says ``nondeterministic=True`` is
   ``not_compared``: neither is ever ``identical``.
"""

from __future__ import annotations

import pickle
from dataclasses import replace
from typing import Any

import gymnasium

from ..._core._capture import capture
from ..._core._process import Outcome
from .._verify import RUN_JOB, Trace, compare, plan_actions
from .._verify.generators import Watch, drawn, generator_finding
from .._verify.jobs import carried_exactly, multi_agent
from .._verify.report import GLOBAL_GENERATOR, HASH_ORDER
from .checks import ezpickle_gaps, first_step, live_capture
from .classify import failure, raised, rollout_missing, unset_required
from .control import (
    CONFIRM_BUILDS,
    CONFIRM_JOB,
    Build,
    clean_build,
    close_quietly,
    control,
    trace_of,
    watched_make,
)
from .jobs import CONTROL, REFERENCE, REMOTE, Context, Decided, Job, private_tmp
from .report import MISSING_DEPENDENCY, NOT_REPRODUCIBLE, UNSEEDED, Finding
from .select import entry_of
from .timelimit import time_limit
from .vector_job import REFERENCE_VECTOR_JOB, RUN_VECTOR_JOB, sub_envs

__all__ = ["EnvJob", "reference"]

#: This module's job function, as workers import it.
REFERENCE_JOB = f"{__name__}:reference"


def _is_live_env(obj: Any) -> bool:
    return isinstance(obj, gymnasium.Env)


def reference(
    payload: bytes,
    *,
    steps: int,
    seed: int,
    live: bool,
    timeout: float,
    needs: list[str],
    name: str,
) -> dict[str, Any]:
    """The reference side of one env (a job function: runs where the env is registered).

    Parameters
    ----------
    payload
        The pickled pack.
    steps, seed
        The rollout.
    live
        Also capture the live instance and return it when it is another recipe.
    timeout
        The per-env timeout (only for the reason of a timeout here).
    needs, name
        Required entry-point arguments the registration does not give, and the env's name
        (to classify a construction failure as ``needs_arguments``).

    Returns
    -------
    dict
        ``{"failed": {...}}`` when it cannot be built here, else ``trace`` (the reference
        trace), ``repeat``, ``notes`` and ``unseeded`` (see :func:`.control.control`: the
        builds here watch the global generators), ``actions`` (the plan
        both sides run, or None when typed JSON cannot carry the actions exactly: each side then
        plans its own), ``gaps`` (see :func:`.checks.ezpickle_gaps`), ``live`` (see
        :func:`.checks.live_capture`, or None).
    """
    private_tmp()
    try:
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

        result = (control(again(), again, checked=False) if first is None else
                  control(first, again))
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return {"failed": failure(e, "building it", timeout, needs, name)}
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
        self.check_live = not _is_live_env(self.target)
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
            self.notes.append(
                f"vector-only (a vector_entry_point and no entry_point): audited as {built} "
                "on both sides"
            )
        self.add_task(
            "reference",
            REFERENCE,
            function,
            self.payload,
            steps=self.ctx.steps,
            seed=self.ctx.seed,
            live=self.check_live,
            timeout=self.ctx.timeout,
            needs=self.needs,
            name=self.name,
            **self.extra,
        )

    def forget_remote(self) -> None:
        self.results = {}
        self.live_failures = []
        self.control = None

    def take(self, label: str, outcome: Outcome) -> None:
        if label == "confirm":
            self.take_confirmation(outcome)
            return
        if label != "reference":
            if label == "control":
                self.control = outcome  # a failure there is a finding (see hash_differences)
            elif label == "live" and outcome.status != "ok":
                why = outcome.error or outcome.status
                self.live_failures.append(
                    f"rebuilt from capture(env) of a live instance: the rebuild in a "
                    f"{self.ctx.remote_label} failed ({why})"
                )
            else:
                self.results[label] = self.value(label, outcome, REMOTE)
            if not self.outstanding:
                self.check_further()
            return
        value = self.value(label, outcome, REFERENCE)
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
        if value["repeat"] and record:
            raise Decided(self.wrong_record(
                record, list(value["repeat"]), "two builds in this process already differ",
                gaps["step"] if gaps["failures"] else None,
                ezpickle_only=not self.live_differences))
        if value["repeat"]:
            diffs = list(value["repeat"])
            raise Decided(
                self.finish(
                    NOT_REPRODUCIBLE,
                    "two builds in this process already differ, so a rebuild elsewhere cannot "
                    f"be compared with them: {diffs[0]}",
                    differences=tuple(diffs),
                    step=first_step(diffs),
                )
            )
        first = self.here = Trace.from_dict(value["trace"])
        self.notes.extend(value["notes"])
        missing = None if first.error is None else rollout_missing(first.error)
        if first.error is not None and missing is not None:
            raise Decided(
                self.finish(
                    MISSING_DEPENDENCY,
                    f"needs {missing}: the rollout here raised {raised(first.error)}",
                    package=missing,
                    step=first.error.get("step"),
                )
            )
        self.gaps = value["gaps"]
        self.notes.extend(self.gaps["notes"])
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
        live: list[str] = []
        if "live" in self.results:
            there = traces(self.results["live"])[0]
            here = replace(self.here, spec={})
            live = [f"rebuilt from capture(env) of a live instance: {d}"
                    for d in compare(here, replace(there, spec={}), labels=labels, shared=False)]
        return rebuilt, live

    def rollouts_differ(self) -> bool:
        """Whether a remote rollout differs from the reference (once both remote tasks ran)."""
        return "rebuild" in self.results and any(self.remote_differences())

    def add_control(self) -> None:
        """Queue the hash control: the rebuild's task in a fresh interpreter under another
        ``PYTHONHASHSEED`` (verify's, see :class:`.jobs.Context`); nothing where the remote
        side's hash seed is not set (spawn and forkserver children)."""
        if self.ctx.control_seed is None or "control" in self.outstanding:
            return
        self.add_task("control", CONTROL, self.run_job, self.payload, **self.run_params,
                      **self.extra)

    def check_further(self) -> None:
        """Once every remote task answered: rule out chance and hash order before a verdict.

        A rebuild that differs from the reference gets the hash control (when it has not run)
        and the confirmation (more clean builds here, :func:`.control.confirm`); so does a
        control that differs from the rebuild (a rollout that draws from an unseeded
        generator differs between any two builds: a clean build here that differs too makes
        it ``not_reproducible``, not a matter of hash order). Confirmed even when seen in a
        reused worker: chance is ruled out before the scheduler blames what other envs left
        there (and reruns it in a clean one).
        """
        if "rebuild" not in self.results:
            return
        differ = self.rollouts_differ()
        if differ and self.control is None:
            self.add_control()
        if self.confirmed is None and (differ or self.hash_differences()):
            self.add_task("confirm", REFERENCE, CONFIRM_JOB, self.payload,
                          trace=self.here.to_dict(), run_job=self.run_job,
                          builds=CONFIRM_BUILDS, budget=self.ctx.timeout / 2,
                          **self.run_params, **self.extra)

    def hash_differences(self) -> list[str]:
        """What differs between the rebuild and the hash control, two fresh interpreters that
        differ only in ``PYTHONHASHSEED`` (``[]``: they agree, or the control did not run)."""
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
        """:data:`.findings.UNSEEDED`: the env follows hash order; the reason names the fix."""
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
        """:data:`.findings.UNSEEDED` (cause ``global_generator``): two builds here drew
        different values from a global generator (``found``: the call, its step and the
        generator). The reason is verify's (:func:`~specpack._tools._verify.generators.generator_finding`:
        the call, the generator, the fix); the differences add what the builds here showed
        (``repeat``) and a wrong record, if any: whatever the rollouts do, no comparison of
        them is a verdict."""
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
        confirmed = (self.confirmed_verdict(record, rebuilt + live, gap_step,
                                            ezpickle_only=not other) if rebuilt or live else
                     self.confirmed_verdict(record, self.hash_differences(), gap_step,
                                            ezpickle_only=not other, what="the hash control"))
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
