"""A user script on legacy gym: a custom env defined and registered inside the main guard.

Run as __main__ by tests/core/backends/gym/test_gym_workers.py. Prints one JSON line: the
parent's rollout, the controls (gym.make(id) and gym.make(spec) in a spawn child) and the pack's
rollouts in spawn and forkserver children and in a fresh interpreter in another working
directory.
"""

import contextlib
import json
import multiprocessing as mp
import pickle
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message=".*np.bool8.*", category=DeprecationWarning)

import gym  # noqa: E402
import numpy as np  # noqa: E402

STEPS = 12


def rollout(env, seed=11):
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    out = [np.asarray(obs).tolist()]
    for i in range(STEPS):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        out.append([i + 1, np.asarray(obs).tolist(), float(reward), terminated, truncated])
        if terminated or truncated:
            out.append(np.asarray(env.reset()[0]).tolist())
    return out


def stack(env):
    names = [type(env).__name__]
    while hasattr(env, "env"):
        env = env.env
        names.append(type(env).__name__)
    return names


def child_control(target):
    """What a worker does without specpack: gym.make the id (or the pickled spec)."""
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    try:
        env = gym.make(pickle.loads(target) if isinstance(target, bytes) else target)
        return "ok " + str(env)
    except Exception as e:  # noqa: BLE001 - the real cause, shown by the test
        return f"{type(e).__name__}: {e}"


def child_make(blob):
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    pack = pickle.loads(blob)
    env = pack.make()
    return {"stack": stack(env), "rollout": rollout(env), "gym_module": type(env).__module__}


@contextlib.contextmanager
def pool_of(method, processes):
    """A Pool whose workers end by themselves: close() and join(), never terminate().

    ``with Pool(...)`` ends in terminate(), which takes the task queue's lock, drains what is
    left in it (a late-starting worker's stop sentinel too) and SIGTERMs the workers. Under
    coverage's ``sigterm = true`` (CI runs with it) every process has a Python-level SIGTERM
    handler, inherited by a forkserver's children, and a child that gets the signal while it
    is still starting loses it: the worker then waits forever for the lock, and terminate()
    for the worker (the 240 s hang of CI). close() sends each worker its sentinel and join()
    waits for them to leave; terminate() only on an error.
    """
    pool = mp.get_context(method).Pool(processes)
    try:
        yield pool
    except BaseException:
        pool.terminate()
        raise
    pool.close()
    pool.join()


FRESH = """
import json, pickle, sys, warnings
warnings.filterwarnings("ignore", category=DeprecationWarning)
pack = pickle.loads(open(sys.argv[1], "rb").read())
gym_before_make = "gym" in sys.modules
env = pack.make()
sys.path.insert(0, sys.argv[2])
from gym_main_guard import rollout, stack
print(json.dumps({"stack": stack(env), "rollout": rollout(env), "gym_before_make": gym_before_make}))
"""


if __name__ == "__main__":
    import specpack

    class GymDrift(gym.Env):
        """Defined in the main guard: no worker can import it by name."""

        metadata = {"render_modes": []}

        def __init__(self, speed=1.0):
            self.speed = speed
            self.observation_space = gym.spaces.Box(-50, 50, (2,), np.float64)
            self.action_space = gym.spaces.Discrete(3)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.x = self.np_random.uniform(-1, 1, 2)
            return self.x.copy(), {}

        def step(self, action):
            self.x = self.x + self.speed * (action - 1) + self.np_random.normal(0, 0.1, 2)
            return self.x.copy(), float(-abs(self.x).sum()), False, False, {}

    gym.register(id="GymDrift-v0", entry_point="__main__:GymDrift", max_episode_steps=7,
                 kwargs={"speed": 0.5})
    pack = specpack.capture("GymDrift-v0", backend="gym", speed=0.25)
    blob = pickle.dumps(pack)
    parent = {"stack": stack(pack.make()), "rollout": rollout(pack.make())}
    reference = rollout(gym.make("GymDrift-v0", speed=0.25))
    out = {"parent": parent, "gym_make_here": reference, "by_value": pack.entry_point.by_value}
    with pool_of("spawn", 1) as pool:
        out["control_id_spawn"] = pool.apply(child_control, ("GymDrift-v0",))
        out["control_spec_spawn"] = pool.apply(child_control, (pickle.dumps(gym.spec("GymDrift-v0")),))
    for method in ("spawn", "forkserver"):
        with pool_of(method, 2) as pool:
            out[method] = pool.apply(child_make, (blob,))
    with tempfile.TemporaryDirectory() as other:
        path = Path(other) / "pack.pkl"
        path.write_bytes(blob)
        proc = subprocess.run([sys.executable, "-c", FRESH, str(path), str(Path(__file__).parent)],
                              cwd=other, capture_output=True, text=True, timeout=120)
        if proc.returncode:
            out["fresh"] = {"error": proc.stderr}
        else:
            out["fresh"] = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps(out))
