"""Auditing a vector-only id (a spec with only a ``vector_entry_point``, Meta-World's MT10).

Such a pack has no single env: ``specpack.make_vec(pack, n)`` builds it with its vector
creator. Both sides build it with :data:`NUM_ENVS` sub-envs (or with the creator's own count
when it has one: see :func:`sub_envs`) and the engine records and compares
it like any env: :class:`Batched` shows the engine's ``record`` one batched step at a time (per
sub-env flags kept, and no reset passed on after an episode ends: a vector env resets its own
sub-envs).
"""

from __future__ import annotations

import inspect
import pickle
from typing import Any

from gymnasium.envs import registration as gym_registration

from ...vector import make_vec
from .._verify import plan_actions, record, writable
from .._verify.jobs import carried_exactly
from .classify import failure
from .control import Build, close_quietly, control, watched_make
from .jobs import private_tmp
from .select import registry

__all__ = ["NUM_ENVS", "RUN_VECTOR_JOB", "Batched", "reference_vector", "run_vector", "sub_envs"]

#: Sub-envs of an audited vector env (two, so that per-sub-env seeding is compared too).
NUM_ENVS = 2
REFERENCE_VECTOR_JOB = f"{__name__}:reference_vector"
RUN_VECTOR_JOB = f"{__name__}:run_vector"


def sub_envs(env_id: str) -> int | None:
    """How many sub-envs the audit asks the vector creator of ``env_id`` for.

    :data:`NUM_ENVS`, unless the creator picks its own count: a ``num_envs`` parameter that
    defaults to None (Meta-World's benchmarks: one sub-env per task; ``ML10-test`` refuses
    any other count). Asking those for two would report the audit's choice as the env's fault.
    """
    spec = registry().get(env_id)
    creator = getattr(spec, "vector_entry_point", None)
    if isinstance(creator, str):
        try:

            creator = gym_registration.load_env_creator(creator)
        except Exception:  # noqa: BLE001 - the build reports what is wrong with it
            return NUM_ENVS
    if not callable(creator):
        return NUM_ENVS
    try:
        param = inspect.signature(creator).parameters.get("num_envs")
    except (TypeError, ValueError):
        return NUM_ENVS
    return None if param is not None and param.default is None else NUM_ENVS


def _make(pack: Any, num_envs: int | None) -> Any:
    return make_vec(pack, num_envs) if num_envs is not None else pack._make_vector(None, {})


class Flags(tuple):  # type: ignore[type-arg]
    """Per-sub-env ``terminated``/``truncated`` flags: truthy when any sub-env's episode ended."""

    def __bool__(self) -> bool:
        return any(self)


class Batched:
    """A vector env as the engine's ``record`` sees an env: one batched step at a time."""

    def __init__(self, venv: Any) -> None:
        self.env = venv
        self.unwrapped = getattr(venv, "unwrapped", venv)
        self.observation_space = venv.observation_space
        self.action_space = venv.action_space
        self.render_mode = getattr(venv, "render_mode", None)
        self.spec = getattr(self.unwrapped, "spec", None)
        self._last: tuple[Any, Any] | None = None

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, Any]:
        if seed is None and self._last is not None:
            return self._last  # the sub-envs whose episode ended reset themselves
        self._last = self.env.reset(seed=seed, options=options)
        return self._last

    def step(self, action: Any) -> tuple[Any, ...]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._last = (obs, info)
        flags = (Flags(bool(x) for x in terminated), Flags(bool(x) for x in truncated))
        return obs, reward, flags[0], flags[1], info


def _build(pack: Any, actions: list[Any] | None, steps: int, seed: int, num_envs: int | None,
           watch: bool = False) -> Build:
    """One build of the vector pack and its batched rollout (watched: the builds here)."""
    venv, watched = (watched_make(lambda: _make(pack, num_envs)) if watch else
                     (_make(pack, num_envs), None))
    try:
        env = Batched(venv)
        todo = plan_actions(env.action_space, steps, seed) if actions is None else actions
        trace = record(env, writable(todo), seed, watch=watched).to_dict()
        return Build(trace, [] if watched is None else watched.touches)
    finally:
        close_quietly(venv)


def _traces(pack: Any, actions: list[Any] | None, steps: int, seed: int, repeat: int,
            num_envs: int | None) -> Any:
    return {"traces": [_build(pack, actions, steps, seed, num_envs).trace
                       for _ in range(repeat)]}


def run_vector(
    payload: bytes, *, steps: int, seed: int, repeat: int = 1, actions: list[Any] | None = None,
    num_envs: int | None = NUM_ENVS,
) -> dict[str, Any]:
    """Build the pickled vector-only pack ``repeat`` times and record each (a job function;
    ``num_envs``: as :func:`sub_envs` chose).

    Returns
    -------
    dict
        ``{"traces": [...]}``, as the engine's ``run_trace``.
    """
    traces: dict[str, Any] = _traces(pickle.loads(payload), actions, steps, seed, repeat,
                                     num_envs)
    return traces


def reference_vector(
    payload: bytes, *, steps: int, seed: int, timeout: float, needs: list[str], name: str,
    live: bool = False, num_envs: int | None = NUM_ENVS,
) -> dict[str, Any]:
    """The reference side of a vector-only pack (a job function; see ``env_job.reference``).

    The actions are planned from a fresh build's batched action space, and that build runs
    the first rollout of the repeat control (:func:`.control.control`; every build here
    watches the global generators, in this process: sub-envs an async vector env runs in
    processes of its own are not seen); the EzPickle and live-stack checks do not apply
    (there is no single env).
    """
    private_tmp()
    try:
        pack = pickle.loads(payload)
        venv, made = watched_make(lambda: _make(pack, num_envs))
        try:
            env = Batched(venv)
            actions = plan_actions(env.action_space, steps, seed)
            first = Build(record(env, writable(actions), seed, watch=made).to_dict(),
                          made.touches)
        finally:
            close_quietly(venv)
        sent = actions if carried_exactly(actions) else None

        def again() -> Build:
            return _build(pack, sent, steps, seed, num_envs, watch=True)

        result = control(first, again, checked=False)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return {"failed": failure(e, "building it", timeout, needs, name)}
    gaps: dict[str, Any] = {"failures": [], "notes": [], "step": None}
    return {**result, "actions": sent, "gaps": gaps, "live": None}
