"""An env whose module needs a physics engine that is not installed here."""

import auditpkg_physics_engine  # noqa: F401  (deliberately not installed)

from .envs import GoodEnv


class FancyPhysicsEnv(GoodEnv):
    """Never built: importing this module fails."""
