"""Sample Factory 2.1.1's ``run_rl`` on an env registered at run time (run as a script).

``python run_sample_factory.py pack|control TRAIN_DIR``. The env class is defined and registered
with gymnasium *inside the main guard* (no spawn child can import or register it).

- ``pack``: ``specpack.adapters.sample_factory.register(pack)``; a tiny CPU run (spawn workers,
  Sample Factory's default), then, in a spawn child given Sample Factory's context as its rollout
  workers are, env i built by ``make_env_func_batched`` (the rollout workers' path), seeded
  SEED + i and stepped. Prints one JSON line: run_rl's status, those rollouts, the parent's
  ``pack.make()`` rollouts, and the processes that built the env.
- ``control``: Sample Factory's own recipe for a gymnasium id (a module-level creator calling
  ``gymnasium.make(full_env_name)``). Its env-info child fails with ``NameNotFound`` and the
  parent waits in ``q.get()`` with no timeout: the test bounds that wait and kills the script.
"""

import json
import multiprocessing as mp
import os
import sys

import gymnasium as gym
import numpy as np
from clients_common import SEED, STEPS, action, note_build, reference

import specpack

NUM_ENVS = 2


def make_gym_env_func(full_env_name, cfg=None, env_config=None, render_mode=None):
    """Sample Factory's documented creator for a gymnasium id (the control)."""
    return gym.make(full_env_name, render_mode=render_mode)


def sf_rollouts(sf_context, cfg, n):
    """In a spawn child, as a rollout worker: env i through make_env_func_batched, seeded."""
    import torch
    from sample_factory.algo.utils.context import set_global_context
    from sample_factory.algo.utils.make_env import make_env_func_batched
    from sample_factory.utils.attr_dict import AttrDict

    set_global_context(sf_context)
    out = []
    for i in range(n):
        env = make_env_func_batched(cfg, AttrDict(worker_index=0, vector_index=i, env_id=i))
        env.seed(SEED + i)
        obs, _ = env.reset()
        steps = [obs["obs"][0].tolist()]
        for t in range(STEPS):
            obs, *_ = env.step(torch.tensor([action(t, i)]))
            steps.append(obs["obs"][0].tolist())
        env.close()
        out.append(steps)
    return out


def sf_args(name, train_dir):
    return [
        f"--env={name}", "--experiment=specpack", f"--train_dir={train_dir}", "--device=cpu",
        "--num_workers=1", f"--num_envs_per_worker={NUM_ENVS}", "--worker_num_splits=1",
        "--rollout=8", "--batch_size=16", "--num_batches_per_epoch=1", "--num_epochs=1",
        "--train_for_env_steps=300", "--encoder_mlp_layers", "16", "--use_env_info_cache=False",
        "--with_wandb=False", "--decorrelate_envs_on_one_worker=False", "--seed=0",
        "--save_every_sec=1000", "--save_best_every_sec=1000", "--experiment_summaries_interval=1000",
    ]


def builders():
    """pid -> env constructors run there (the parent is marked)."""
    counts = {}
    with open(os.environ["CLIENTS_BUILDS"], encoding="utf-8") as fh:
        for line in fh:
            counts[line.strip()] = counts.get(line.strip(), 0) + 1
    return counts


if __name__ == "__main__":
    from sample_factory.algo.utils.context import sf_global_context
    from sample_factory.cfg.arguments import parse_full_cfg, parse_sf_args
    from sample_factory.envs.env_utils import register_env
    from sample_factory.train import run_rl

    from specpack.adapters import sample_factory

    class Walk(gym.Env):
        """Defined inside the main guard: no spawn child can import it."""

        def __init__(self, n=3, stride=0.5, render_mode=None):
            note_build()
            self.n, self.stride, self.render_mode = n, stride, render_mode
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

    mode, train_dir = sys.argv[1], sys.argv[2]
    gym.register("Walk-v0", entry_point=Walk, max_episode_steps=50)
    if mode == "control":
        register_env("Walk-v0", make_gym_env_func)
        name = "Walk-v0"
    else:
        pack = specpack.capture("Walk-v0", record_spaces=True)
        name = sample_factory.register(pack)
    parser, _ = parse_sf_args(sf_args(name, train_dir))
    cfg = parse_full_cfg(parser, sf_args(name, train_dir))
    status = run_rl(cfg)
    out = {"name": name, "status": status, "parent": str(os.getpid()), "builders": builders()}
    if mode == "control":  # not reached with Sample Factory 2.1.1: the parent waits for ever
        print(json.dumps(out), flush=True)
        sys.exit(0)
    out["reference"] = reference(pack.make, NUM_ENVS)
    with mp.get_context("spawn").Pool(1) as pool:
        out["rollouts"] = pool.apply(sf_rollouts, (sf_global_context(), cfg, NUM_ENVS))
    print(json.dumps(out), flush=True)
