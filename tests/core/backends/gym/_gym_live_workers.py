"""Spawn-child side of test_gym_live (importable: spawn children get the parent's sys.path)."""

from __future__ import annotations

import pickle
import warnings


def rebuild_and_roll(blob: bytes) -> dict:
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    from test_gym_live import rollout, stack

    env = pickle.loads(blob).make()
    return {"stack": stack(env), "rollout": rollout(env)}
