"""Recorders: capturing live envs wrapped in wrappers that do not record their arguments."""

from __future__ import annotations

import gymnasium
import minigrid  # noqa: F401 - registers MiniGrid ids
import numpy as np
import pytest
from minigrid.wrappers import (
    FlatObsWrapper,
    NoDeath,
    PositionBonus,
    RGBImgPartialObsWrapper,
    StochasticActionWrapper,
    ViewSizeWrapper,
)

import specpack


class Scaled(gymnasium.RewardWrapper):  # type: ignore[type-arg]
    """A user wrapper that does not record its argument."""

    def __init__(self, env: gymnasium.Env, scale: float = 1.0) -> None:  # type: ignore[type-arg]
        super().__init__(env)
        self.factor = scale

    def reward(self, reward: float) -> float:
        return reward * self.factor


def _rollout(env: gymnasium.Env, steps: int = 20) -> list[float]:  # type: ignore[type-arg]
    env.reset(seed=1)
    env.action_space.seed(1)
    out = []
    for _ in range(steps):
        _, r, term, trunc, _ = env.step(env.action_space.sample())
        out.append(float(r))
        if term or trunc:
            env.reset()
    return out


def test_unrecorded_user_wrapper_is_refused_then_captured_with_a_registered_recorder() -> None:
    live = Scaled(gymnasium.make("CartPole-v1"), scale=3.0)
    with pytest.raises(specpack.UnrecordedArgumentsError, match="register_recorder"):
        specpack.capture(live)
    specpack.register_recorder(Scaled, lambda w: {"scale": w.factor})
    pack = specpack.capture(live)
    assert dict(pack.layers[0].kwargs) == {"scale": 3.0}
    assert _rollout(pack.make()) == _rollout(Scaled(gymnasium.make("CartPole-v1"), scale=3.0))


def test_sb3_monitor_is_captured_with_its_arguments(tmp_path) -> None:
    # Imported here: stable_baselines3 loads torch (3 s), which every pytest worker would load
    # at collection and carry into each process it later forks.
    from stable_baselines3.common.monitor import Monitor

    log = tmp_path / "logs" / "run"
    live = Monitor(gymnasium.make("CartPole-v1"), filename=str(log), allow_early_resets=False,
                   info_keywords=("x",))
    pack = specpack.capture(live)
    kw = dict(pack.layers[0].kwargs)
    assert pack.layers[0].name == "Monitor"
    assert kw["filename"].endswith("run.monitor.csv") and kw["allow_early_resets"] is False
    assert kw["info_keywords"] == ("x",) and kw["override_existing"] is True
    rebuilt = pack.make()
    assert isinstance(rebuilt, Monitor) and rebuilt.allow_early_resets is False


@pytest.mark.parametrize("wrap", [
    lambda e: ViewSizeWrapper(e, agent_view_size=5),
    lambda e: RGBImgPartialObsWrapper(e, tile_size=4),
    lambda e: FlatObsWrapper(e, maxStrLen=64),
    lambda e: PositionBonus(e, scale=0.5),
    lambda e: StochasticActionWrapper(e, prob=0.7, random_action=2),
    lambda e: NoDeath(e, no_death_types=("lava",), death_cost=-0.5),
], ids=["ViewSize", "RGBImgPartialObs", "FlatObs", "PositionBonus", "StochasticAction", "NoDeath"])
def test_minigrid_wrapper_is_captured_with_non_default_arguments(wrap) -> None:
    live = wrap(gymnasium.make("MiniGrid-Empty-5x5-v0"))
    pack = specpack.capture(live)
    rebuilt = pack.make()
    assert type(rebuilt) is type(live)
    assert rebuilt.observation_space == live.observation_space
    a, b = _rollout(rebuilt), _rollout(wrap(gymnasium.make("MiniGrid-Empty-5x5-v0")))
    assert np.allclose(a, b)
