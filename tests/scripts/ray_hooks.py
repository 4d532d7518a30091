"""A user's own Ray ``worker_process_setup_hook`` (a ``"module.function"`` string names it).

``specpack.ray.runtime_env(..., base={"worker_process_setup_hook": "ray_hooks.squat"})`` must
still run it in each worker, before the packs are registered: it marks the process, and it
registers another env under the id named by ``SPECPACK_SQUAT_ID``, which the captured pack
must then replace (the driver's env wins, as it does in the driver).
"""

from __future__ import annotations

import os


def squat() -> None:
    """Mark this worker; register CartPole under ``$SPECPACK_SQUAT_ID`` (if set)."""
    os.environ["SPECPACK_BASE_HOOK_RAN"] = str(os.getpid())
    env_id = os.environ.get("SPECPACK_SQUAT_ID")
    if env_id:
        import gymnasium

        gymnasium.register(env_id, entry_point="gymnasium.envs.classic_control:CartPoleEnv")
