"""Live wrapped envs captured with their exact stacks, rebuilt in real spawn children."""

import json
import multiprocessing as mp
import pickle

import gymnasium as gym
import numpy as np
from _common import layer_names, load_by_path, rollout
from gymnasium.wrappers import NormalizeObservation, TimeLimit, TransformObservation

import specpack


def child_rebuild(pack):
    env = pack.make()
    return {"layers": layer_names(env), "rollout": rollout(env, steps=25)}


class Agent(mp.Process):
    """The blog post's pattern: the pack arrives in __init__, the env is built in run()."""

    def __init__(self, pack, queue):
        super().__init__()
        self.pack = pack
        self.queue = queue

    def run(self):
        env = self.pack.make()
        self.queue.put({"layers": layer_names(env), "rollout": rollout(env, steps=25),
                        "goal": getattr(env.unwrapped, "goal", None)})


def nested_wrapper_env():
    class Shift(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
        def __init__(self, env, by=0.0):
            gym.utils.RecordConstructorArgs.__init__(self, by=by)
            gym.ObservationWrapper.__init__(self, env)
            self.by = by

        def observation(self, obs):
            return obs + self.by

    return Shift(gym.make("CartPole-v1"), by=0.25)


if __name__ == "__main__":
    mod = load_by_path("antfile_mod", "antfile_mod.py")

    class MainToy(gym.Env, gym.utils.EzPickle):
        observation_space = gym.spaces.Box(-10, 10, (1,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def __init__(self, gravity=9.8, goal=1.0):
            gym.utils.EzPickle.__init__(self, gravity=gravity, goal=goal)
            self.gravity, self.goal = gravity, goal

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            return np.array([self.goal], np.float32), {}

        def step(self, action):
            return np.array([self.goal + action], np.float32), self.gravity, False, False, {}

    cases = {}
    if gym.__version__.startswith("0."):  # gymnasium 0.28/0.29: no ClipReward
        env = gym.wrappers.NormalizeReward(gym.make("CartPole-v1"), gamma=0.0, epsilon=0.5)
    else:
        env = gym.wrappers.ClipReward(gym.make("CartPole-v1"), 0, 0.5)
    env = TimeLimit(env, 20)
    cases["order"] = NormalizeObservation(env)
    cases["file_wrapper"] = mod.ScaleReward(gym.make("CartPole-v1"), scale=3.0)
    cases["lambda"] = TransformObservation(gym.make("CartPole-v1"), lambda o: o * 2.0,
                                           *(() if gym.__version__.startswith("0.") else (None,)))
    cases["nested"] = nested_wrapper_env()
    cases["direct_toy"] = TimeLimit(MainToy(gravity=3.0, goal=5.0), 4)

    ctx = mp.get_context("spawn")
    out = {}
    with ctx.Pool(1) as pool:
        for name, live in cases.items():
            pack = pickle.loads(pickle.dumps(specpack.capture(live)))
            here = pack.make()
            out[name] = {
                "original_layers": layer_names(live),
                "parent": {"layers": layer_names(here), "rollout": rollout(here, steps=25)},
                "spawn": pool.apply(child_rebuild, (pack,)),
                "envspec_rebuild": None,
            }
            try:
                out[name]["envspec_rebuild"] = layer_names(gym.make(live.spec))
            except Exception as e:  # noqa: BLE001
                out[name]["envspec_rebuild"] = f"{type(e).__name__}: {e}"
    queue = ctx.Queue()
    agent = Agent(specpack.capture(cases["direct_toy"]), queue)
    agent.start()
    out["agent"] = queue.get(timeout=120)
    agent.join(60)
    out["agent_parent"] = child_rebuild(specpack.capture(cases["direct_toy"]))
    print(json.dumps(out))
