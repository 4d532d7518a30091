"""Auditing a vector-only id (only a ``vector_entry_point``, Meta-World's MT10): both sides
build it with ``specpack.make_vec(pack, n)`` and the engine records it as :class:`Batched` shows
it, one batched step at a time (a vector env resets its own sub-envs)."""

from __future__ import annotations

import inspect
import pickle
from typing import Any

from gymnasium.envs import registration as gym_registration

from ...vector import make_vec
from .._verify.jobs import carried_exactly
from .._verify.trace import plan_actions, record, writable
from .classify import guard
from .control import Build, close_quietly, control, watched_make
from .jobs import private_tmp
from .select import registry

__all__ = ["NUM_ENVS", "RUN_VECTOR_JOB", "Batched", "reference_vector", "run_vector", "sub_envs"]

#: Sub-envs of an audited vector env (two, so that per-sub-env seeding is compared too).
NUM_ENVS = 2
REFERENCE_VECTOR_JOB = f"{__name__}:reference_vector"
RUN_VECTOR_JOB = f"{__name__}:run_vector"


def sub_envs(env_id: str) -> int | None:
    """How many sub-envs the audit asks the vector creator of ``env_id`` for: :data:`NUM_ENVS`,
    or None (its own count) when its ``num_envs`` defaults to None (Meta-World's benchmarks:
    one sub-env per task; asking those for two would blame the env for the audit's choice)."""
    creator: Any = getattr(registry().get(env_id), "vector_entry_point", None)
    if isinstance(creator, str):
        try:
            creator = gym_registration.load_env_creator(creator)
        except Exception:  # noqa: BLE001 - the build reports what is wrong with it
            return NUM_ENVS
    try:
        param = inspect.signature(creator).parameters.get("num_envs")
    except (TypeError, ValueError):  # not callable, or no signature
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
        return obs, reward, Flags(map(bool, terminated)), Flags(map(bool, truncated)), info


def _build(pack: Any, actions: list[Any] | None, steps: int, seed: int, num_envs: int | None,
           watch: bool = False) -> tuple[Build, list[Any]]:
    """One build of the vector pack (watched: the builds here) and its batched rollout over
    ``actions`` (None: planned from its action space), and those actions."""
    venv, watched = (watched_make(lambda: _make(pack, num_envs)) if watch else
                     (_make(pack, num_envs), None))
    try:
        env = Batched(venv)
        todo = plan_actions(env.action_space, steps, seed) if actions is None else actions
        trace = record(env, writable(todo), seed, watch=watched).to_dict()
        return Build(trace, [] if watched is None else watched.touches), todo
    finally:
        close_quietly(venv)


def run_vector(payload: bytes, *, steps: int, seed: int, actions: list[Any] | None = None,
               num_envs: int | None = NUM_ENVS) -> dict[str, Any]:
    """Build the pickled vector-only pack and record it (a job function, answering as the
    engine's ``run_trace``: ``{"traces": [trace]}``)."""
    return {"traces": [_build(pickle.loads(payload), actions, steps, seed, num_envs)[0].trace]}


def reference_vector(payload: bytes, *, steps: int, seed: int, timeout: float, needs: list[str],
                     name: str, live: bool = False,
                     num_envs: int | None = NUM_ENVS) -> dict[str, Any]:
    """The reference side of a vector-only pack (a job function, as ``env_job.reference``
    without the checks of a single env; sub-envs in processes of their own are not watched)."""
    private_tmp()

    def work() -> dict[str, Any]:
        pack = pickle.loads(payload)
        first, actions = _build(pack, None, steps, seed, num_envs, watch=True)
        sent = actions if carried_exactly(actions) else None
        found = control(first, lambda: _build(pack, sent, steps, seed, num_envs, watch=True)[0],
                        checked=False)
        gaps: dict[str, Any] = {"failures": [], "notes": [], "step": None}
        return {**found, "actions": sent, "gaps": gaps, "live": None}

    return guard("building it", timeout, work, needs, name)
