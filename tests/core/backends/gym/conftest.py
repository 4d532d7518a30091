"""tests/core/backends/gym runs only where the legacy gym 0.26 can run: gym installed,
numpy < 2.

That is CI's gym venv (``pip install 'numpy<2' -e '.[gym,test-core]'``), which runs
``SPECPACK_GYM_TESTS=1 python -m pytest tests/core/backends/gym``. Elsewhere (the main venv has
numpy 2, the gymnasium-1.0 venv has no gym) the directory is not collected at all: these tests
belong to another venv, they are not skipped. With ``SPECPACK_GYM_TESTS=1`` a venv that cannot run
them is an error, so CI cannot pass by collecting nothing.
"""

from __future__ import annotations

import importlib.util
import os
import warnings

import pytest


def _unusable() -> str | None:
    if importlib.util.find_spec("gym") is None:
        return "gym is not installed"
    import numpy

    if int(numpy.__version__.split(".")[0]) >= 2:
        return f"numpy {numpy.__version__} is installed (gym 0.26 needs numpy<2)"
    return None


_WHY = _unusable()
if _WHY is not None:
    if os.environ.get("SPECPACK_GYM_TESTS") == "1":
        raise pytest.UsageError(
            f"SPECPACK_GYM_TESTS=1 but this venv cannot run tests/core/backends/gym: {_WHY}; "
            "install with "
            "pip install 'numpy<2' -e '.[gym,test-core]'"
        )
    collect_ignore_glob = ["*"]
else:
    # gym's own np.bool8 use warns under numpy 1.24+; it is gym's noise, not a test signal.
    warnings.filterwarnings("ignore", message=".*np.bool8.*", category=DeprecationWarning)


@pytest.fixture(autouse=True)
def _quiet_gym_checker_warnings():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*np.bool8.*", category=DeprecationWarning)
        yield
