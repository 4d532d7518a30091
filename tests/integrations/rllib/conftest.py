"""tests/integrations/rllib runs only in the RLlib venv, with SPECPACK_RLLIB_TESTS=1.

``ray[rllib]`` 2.60 pins gymnasium 1.2.2 (and pulls torch, pandas, pyarrow, scipy, dm-tree), so
it lives in its own venv::

    python3 -m venv ../venv-rllib
    ../venv-rllib/bin/pip install -q torch==2.13.0
    ../venv-rllib/bin/pip install -q "ray[rllib]==2.60.0" "pettingzoo>=1.24" pytest pytest-timeout -e .
    SPECPACK_RLLIB_TESTS=1 ../venv-rllib/bin/python -m pytest tests/integrations/rllib

Elsewhere the directory is not collected at all (these tests belong to another venv; they are
not skipped). With ``SPECPACK_RLLIB_TESTS=1`` a venv that cannot import RLlib is an error, so
CI cannot pass by collecting nothing.
"""

from __future__ import annotations

import os

import pytest


def _unusable() -> str | None:
    try:
        import ray.rllib.algorithms.ppo  # noqa: F401
    except Exception as e:  # noqa: BLE001 - any import failure means: not this venv
        return f"ray.rllib cannot be imported ({type(e).__name__}: {e})"
    return None


if os.environ.get("SPECPACK_RLLIB_TESTS") != "1":
    collect_ignore_glob = ["*"]
else:
    _WHY = _unusable()
    if _WHY is not None:
        raise pytest.UsageError(
            f"SPECPACK_RLLIB_TESTS=1 but this venv cannot run tests/integrations/rllib: {_WHY}; "
            "install it with pip install torch==2.13.0 'ray[rllib]==2.60.0' pytest -e ."
        )
