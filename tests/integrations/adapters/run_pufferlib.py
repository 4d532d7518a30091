"""PufferLib 3.0's pure-Python vectorization fed specpack.adapters.pufferlib (run as a script).

``python run_pufferlib.py pack|control``. The env class is defined and registered with gymnasium
*inside the main guard* (no spawn or forkserver worker can import or register it).

- ``pack``: for each start method (fork, spawn, forkserver: PufferLib's ``Multiprocessing``
  starts workers with the default one) and backend (``Serial``, ``Multiprocessing``), two envs
  from ``env_creator(pack)``, reset with seed SEED (env i gets SEED + i) and stepped with fixed
  actions. Prints one JSON line: those rollouts next to the parent's ``pack.make()`` rollouts,
  and what the creator gives when called with PufferLib's ``buf=None, seed=0``.
- ``control``: under spawn, a creator that makes the env by id
  (``partial(GymnasiumPufferEnv, env_creator=gymnasium.make, env_args=["Walk-v0"])``): every
  worker dies with ``NameNotFound`` and the parent's ``recv`` spins for ever; the test bounds
  that wait and kills the script.
"""

import functools
import json
import multiprocessing as mp
import pickle
import sys

import gymnasium as gym
import numpy as np
from clients_common import SEED, STEPS, action, note_build, reference

import specpack

NUM_ENVS = 2


def rollouts(vecenv):
    """Env i's observations (by PufferLib's env ids), each reset with SEED + i."""
    vecenv.async_reset(SEED)
    obs, *_, ids, _ = vecenv.recv()
    steps = {int(i): [obs[k].tolist()] for k, i in enumerate(ids)}
    for t in range(STEPS):
        vecenv.send(np.array([action(t, int(i)) for i in ids]))
        obs, *_, ids, _ = vecenv.recv()
        for k, i in enumerate(ids):
            steps[int(i)].append(obs[k].tolist())
    return [steps[i] for i in range(NUM_ENVS)]


def run(creator, backend):
    import pufferlib.vector

    kwargs = {"num_workers": NUM_ENVS, "overwork": True} if backend == "Multiprocessing" else {}
    vecenv = pufferlib.vector.make(creator, backend=getattr(pufferlib.vector, backend),
                                   num_envs=NUM_ENVS, **kwargs)
    try:
        return rollouts(vecenv)
    finally:
        vecenv.close()


if __name__ == "__main__":
    from pufferlib.emulation import GymnasiumPufferEnv

    from specpack.adapters import pufferlib as adapter

    class Walk(gym.Env):
        """Defined inside the main guard: no spawn or forkserver worker can import it."""

        def __init__(self, n=3, stride=0.5):
            note_build()
            self.n, self.stride = n, stride
            self.observation_space = gym.spaces.Box(-100.0, 100.0, (n,), np.float32)
            self.action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.pos = self.np_random.normal(size=self.n).astype(np.float32)
            return self.pos.copy(), {}

        def step(self, action):
            sign = np.float32(self.stride if action else -self.stride)
            self.pos += sign * self.np_random.random(self.n, dtype=np.float32)
            return self.pos.copy(), float(self.pos.sum()), False, False, {}

    gym.register("Walk-v0", entry_point=Walk, max_episode_steps=50)
    if sys.argv[1] == "control":
        mp.set_start_method("spawn")
        by_id = functools.partial(GymnasiumPufferEnv, env_creator=gym.make, env_args=["Walk-v0"])
        print(json.dumps({"control": run(by_id, "Multiprocessing")}), flush=True)
        sys.exit(0)  # not reached with PufferLib 3.0: the parent waits for ever

    pack = specpack.capture("Walk-v0", record_spaces=True)
    out = {"reference": reference(pack.make, NUM_ENVS)}
    creator = adapter.env_creator(pack)
    here = creator(buf=None, seed=0)
    out["creator_here"] = [type(here).__name__, type(here.env.unwrapped).__name__,
                           repr(creator)]
    out["unpickled"] = repr(pickle.loads(pickle.dumps(creator)))
    for method in ("fork", "spawn", "forkserver"):
        mp.set_start_method(method, force=True)
        for backend in ("Serial", "Multiprocessing"):
            out[f"{backend}_{method}"] = run(creator, backend)
    print(json.dumps(out), flush=True)
