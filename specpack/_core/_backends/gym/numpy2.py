"""gym 0.26.2 predates numpy 2: which of its classes fail under numpy 2 (``np.bool8``,
``np.float_``), so that capture and build say the fix instead of an ``AttributeError`` at the
first ``step()``; gym's ``EnvSpec`` defaults and the names of the wrappers that need them.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

__all__ = ["CHECKER", "COMPAT", "SPEC_DEFAULTS", "TIME_LIMIT", "Numpy2Problem", "numpy2_hint",
           "numpy2_problem"]

#: gym's EnvSpec field defaults: fields at these values are left out of a pack's spec record.
SPEC_DEFAULTS: dict[str, object] = {
    "reward_threshold": None,
    "nondeterministic": False,
    "max_episode_steps": None,
    "order_enforce": True,
    "autoreset": False,
    "disable_env_checker": False,
    "apply_api_compatibility": False,
}

CHECKER = "gym.wrappers.env_checker:PassiveEnvChecker"
COMPAT = "gym.wrappers.compatibility:EnvCompatibility"
TIME_LIMIT = "gym.wrappers.time_limit:TimeLimit"


class Numpy2Problem(NamedTuple):
    """Why a gym env fails under this numpy, and the fix (the ``python=``/``cli=`` of its error)."""

    problem: str
    python: str
    cli: str


#: gym 0.26.2 code that needs a numpy alias removed in numpy 2: (alias, why, Python fix, CLI fix).
_NUMPY2: dict[str, tuple[str, str, str, str]] = {
    CHECKER: (
        "bool8",
        "gym's PassiveEnvChecker (which gym.make adds unless the env checker is disabled) tests "
        "isinstance(..., np.bool8) at the first step()",
        "install numpy<2 (pip install 'numpy<2'), or capture with disable_env_checker=True "
        "(for a live env: gym.make(..., disable_env_checker=True))",
        "install numpy<2 (pip install 'numpy<2'), or capture again without the checker: "
        "specpack capture --backend gym ID --disable-env-checker -o FILE",
    ),
    "gym.envs.classic_control.acrobot:AcrobotEnv": (
        "float_",
        "gym's AcrobotEnv integrates with np.float_ in every step()",
        "install numpy<2 (pip install 'numpy<2'); the env itself needs it, so no option helps",
        "install numpy<2 (pip install 'numpy<2'); the env itself needs it, so no option helps",
    ),
}


def _numpy_lacks(alias: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy 1.24+ warns on access to the aliases
        return not hasattr(np, alias)


def numpy2_problem(names: Iterable[str]) -> Numpy2Problem | None:
    """Why an env made of the classes ``names`` (``module:qualname``) fails under this numpy;
    None when numpy has every alias they use (numpy < 2, or ``np.bool8 = np.bool_`` put back)."""
    for name in names:
        known = _NUMPY2.get(name)
        if known is not None and _numpy_lacks(known[0]):
            alias, why, python, cli = known
            return Numpy2Problem(
                f"{why}, but numpy {np.__version__} here has no np.{alias} (numpy 2 removed it), "
                f"so the env would raise AttributeError: module 'numpy' has no attribute "
                f"'{alias}'. gym 0.26 predates numpy 2;", python, cli)
    return None


_NUMPY2_MSG = re.compile(
    r"`np\.\w+` was removed in the NumPy 2\.0 release|module 'numpy' has no attribute '\w+'"
)


def numpy2_hint(e: BaseException) -> str:
    """A fix to append when ``e`` is numpy 2's AttributeError for a removed alias."""
    if isinstance(e, AttributeError) and _NUMPY2_MSG.search(str(e)):
        return (
            f" (numpy {np.__version__} here removed an alias that gym-era code uses; install "
            "numpy<2: pip install 'numpy<2')"
        )
    return ""
