"""Classifying a construction failure: which package is missing, when an env needs arguments.

Pure functions on exception objects (the messages are the real ones of gymnasium 1.4,
gymnasium-robotics 1.4.2, shimmy, box2d); no process boundary is involved.
"""

from __future__ import annotations

from typing import Any

import pytest
from gymnasium.error import DependencyNotInstalled

from specpack._tools._audit.classify import (
    failure,
    missing_package,
    rollout_missing,
    unset_required,
)
from specpack._tools._audit.classify import raised as raised_text

ROBOTICS = (
    "No module named 'mujoco_py'. (HINT: you need to install mujoco_py, and also perform the "
    "setup instructions here: https://github.com/openai/mujoco-py/.)"
)


def raised(exc: BaseException, cause: BaseException | None = None) -> BaseException:
    """``exc`` raised (with ``cause``) and caught, so it has a traceback and a chain."""
    try:
        raise exc from cause
    except BaseException as e:  # noqa: BLE001
        return e


@pytest.mark.parametrize(
    ("exc", "package"),
    [
        # gymnasium-robotics' Fetch*/Hand* envs: no pip hint, no chain ("unknown" before #16).
        (DependencyNotInstalled(ROBOTICS), "mujoco_py"),
        # gymnasium's own Ant-v2/Hopper-v3: two arguments, str() is a tuple's repr.
        (DependencyNotInstalled("No module named 'mujoco_py'. Could not import mujoco_py",
                                "You could either use a newer version"), "mujoco_py"),
        # A pip hint wins over the module name; one with extras over one without.
        (DependencyNotInstalled("No module named 'Box2D'. pip install \"gymnasium[box2d]\""),
         "gymnasium[box2d]"),
        (ImportError('To use the gym compatibility environments, run `pip install '
                     '"shimmy[gym-v21]"` or `pip install "shimmy[gym-v26]"`'), "shimmy[gym-v21]"),
        (ImportError("The mujoco v2 and v3 based environments have been moved to the "
                     "gymnasium-robotics project (https://github.com/...)."), "gymnasium-robotics"),
        (ModuleNotFoundError("No module named 'no_such_pkg_xyz.sub'", name="no_such_pkg_xyz.sub"),
         "no_such_pkg_xyz"),
        (ImportError("cannot import name 'thing' from 'some_pkg'", name="some_pkg"), "some_pkg"),
    ],
)
def test_missing_package_is_named_from_the_message(exc: BaseException, package: str) -> None:
    assert missing_package(raised(exc)) == package


def test_a_wrapped_dependency_error_is_found_through_the_chain() -> None:
    inner = raised(DependencyNotInstalled(ROBOTICS))
    outer = raised(RuntimeError("the env constructor raised"), inner)
    assert missing_package(outer) == "mujoco_py"


def test_a_broken_module_of_an_installed_package_is_not_a_missing_dependency() -> None:
    # gymnasium is installed: a missing submodule of it is a broken import, not a package.
    exc = raised(ModuleNotFoundError("No module named 'gymnasium.nope'", name="gymnasium.nope"))
    assert missing_package(exc) is None
    assert failure(exc, "building it", 60.0)["status"] == "capture_error"


def test_other_errors_are_capture_errors_with_the_traceback() -> None:
    found = failure(raised(RuntimeError("boom")), "building it", 60.0)
    assert found["status"] == "capture_error"
    assert found["reason"] == "building it failed: RuntimeError: boom"
    assert "Traceback" in found["detail"]


def test_a_missing_dependency_reason_names_the_package() -> None:
    found = failure(raised(DependencyNotInstalled(ROBOTICS)), "building it", 60.0)
    assert found["status"] == "missing_dependency" and found["package"] == "mujoco_py"
    assert found["reason"].startswith("needs mujoco_py: DependencyNotInstalled: No module")


def make_with(env_name: str, seed: int = 0, **kwargs: Any) -> None:
    """An entry point like Meta-World's MT1 lambda: ``env_name`` is required."""


def test_needs_arguments_only_when_the_entry_points_own_required_argument_is_missing() -> None:
    needs = unset_required(make_with, {})
    assert needs == ["env_name"]
    assert unset_required(make_with, {"env_name": "reach-v3"}) == []
    missing = raised(TypeError("make_with() missing 1 required positional argument: "
                               "'env_name'"))
    found = failure(missing, "building it", 60.0, needs, "Meta-World/MT1")
    assert found["status"] == "needs_arguments"
    assert "'env_name'" in found["reason"]
    assert "specpack.capture('Meta-World/MT1', env_name=...)" in found["reason"]
    # A TypeError about something else (a bug in the constructor) stays a capture error.
    bug = raised(TypeError("helper() missing 1 required positional argument: 'x'"))
    assert failure(bug, "building it", 60.0, needs, "X")["status"] == "capture_error"
    other = raised(RuntimeError("cannot pickle '_thread.RLock' object"))
    assert failure(other, "capturing it", 60.0, needs, "X")["status"] == "capture_error"


@pytest.mark.parametrize(
    ("error", "package"),
    [
        # minigrid 3.2's MiniGrid-WFC-* reset() without imageio
        ({"type": "gymnasium.error.DependencyNotInstalled",
          "message": 'imageio is missing, please run `pip install "minigrid[wfc]"`'},
         "minigrid[wfc]"),
        ({"type": "gymnasium.error.DependencyNotInstalled", "message": ""}, "unknown"),
        ({"type": "ModuleNotFoundError", "message": "No module named 'specpack_absent_x.sub'"},
         "specpack_absent_x"),
        ({"type": "ImportError", "message": "cannot import name 'x' (pip install renderlib)"},
         "renderlib"),
        # an installed package's broken module, and errors that name no package
        ({"type": "ModuleNotFoundError", "message": "No module named 'numpy.no_such_part'"}, None),
        ({"type": "RuntimeError", "message": "No module named 'specpack_absent_x'"}, None),
        ({"type": "ValueError", "message": "pip install nothing"}, None),
    ],
)
def test_a_rollouts_recorded_exception_names_a_missing_package(
    error: dict[str, Any], package: str | None
) -> None:
    assert rollout_missing({**error, "method": "reset", "step": 0}) == package


def test_a_rollouts_recorded_exception_reads_with_method_and_step() -> None:
    error = {"type": "ValueError", "message": "bad action", "method": "step", "step": 3}
    assert raised_text(error) == "ValueError: bad action in step() at step 3"
    assert raised_text({**error, "message": ""}) == "ValueError in step() at step 3"
