"""``pack.make(**kwargs)`` with a kwarg the constructor does not take: the ``BuildTypeError``
(a ``TypeError``, as ``gymnasium.make`` raises) suggests the parameter that was meant."""

from __future__ import annotations

import gymnasium
import pytest

import specpack
from specpack._core._errors import BuildTypeError


def test_a_mistyped_make_kwarg_gets_a_did_you_mean() -> None:
    pack = specpack.capture("CartPole-v1")
    with pytest.raises(TypeError, match=r"'render_mod'; did you mean 'render_mode'\?") as info:
        pack.make(render_mod="rgb_array")
    assert isinstance(info.value, BuildTypeError)


class Picky(gymnasium.Env):  # type: ignore[type-arg]
    """Raises its own TypeError for a kwarg it does take."""

    def __init__(self, size: int = 1) -> None:
        if not isinstance(size, int):
            raise TypeError(f"size must be an int, got {type(size).__name__}")


def test_a_constructor_type_error_of_its_own_gets_no_suggestion() -> None:
    pack = specpack.capture(Picky)
    with pytest.raises(TypeError, match="size must be an int") as info:
        pack.make(size="2")
    assert "did you mean" not in str(info.value)
