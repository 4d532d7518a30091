"""Reading constructor arguments back, faithfully or not at all, and checking kwargs against a
signature: the refusals name the argument, the source and the fix."""

from __future__ import annotations

import functools
import inspect
from typing import Any

import gymnasium
import numpy as np
import pytest

import specpack
from specpack._core._backends._args import (
    check_coverage,
    check_kwargs,
    evidence_kwargs,
    ezpickle_kwargs,
    init_params,
)
from specpack._core._errors import UnexpectedKwargError, UnrecordedArgumentsError

FIX = "do the fix"


class Ctor:
    def __init__(self, size: int, scale: float = 1.0, *, mode: str = "a") -> None:
        self.size, self._scale, self.mode = size, scale, mode


class Splat:
    def __init__(self, *parts: int, **extra: Any) -> None:
        pass


class Arr:
    def __init__(self, weights: Any = None) -> None:
        self.weights = weights


class Weird:
    """Its stored value cannot be compared with the default."""

    def __init__(self, value: Any = 1) -> None:
        self.value = value


class Incomparable:
    def __eq__(self, other: object) -> bool:
        raise TypeError("no comparisons")

    __hash__ = object.__hash__


def test_an_unknown_kwarg_is_refused_with_the_closest_name_and_what_it_takes() -> None:
    with pytest.raises(UnexpectedKwargError) as info:
        check_kwargs(Ctor, {"scael": 2.0, "colour": 1}, "Ctor")
    text = str(info.value)
    assert text.startswith("Ctor got an unexpected keyword argument 'scael' (nor 'colour');")
    assert "'scale'" in text and text.endswith("takes: size, scale, mode")


def test_kwargs_are_not_checked_against_what_takes_anything_or_cannot_be_read() -> None:
    check_kwargs(Splat, {"anything": 1}, "Splat")
    check_kwargs(type, {"anything": 1}, "type")  # no signature to read
    check_kwargs(Ctor, {}, "Ctor")


def test_an_unhashable_callable_is_still_checked() -> None:
    class Callable:
        __hash__ = None  # type: ignore[assignment]

        def __call__(self, a: int) -> None:
            pass

    with pytest.raises(UnexpectedKwargError, match=r"^f got an unexpected keyword argument 'b'; it takes: a$"):
        check_kwargs(Callable(), {"b": 1}, "f")


def test_init_params_skip_self_env_and_varargs_and_unknowable_is_none() -> None:
    assert [p.name for p in init_params(Ctor) or []] == ["size", "scale", "mode"]
    assert init_params(Splat) == []
    assert init_params(type) is None


def test_coverage_refuses_a_required_argument_that_was_not_recorded() -> None:
    with pytest.raises(UnrecordedArgumentsError) as info:
        check_coverage(Ctor(3), Ctor, {"scale": 1.0}, "the record", FIX)
    assert str(info.value) == (
        f"{__name__}.Ctor requires the argument 'size', which the record did not record, so it "
        f"cannot be rebuilt; {FIX}")


def test_coverage_refuses_a_recorded_name_the_constructor_does_not_take() -> None:
    with pytest.raises(UnrecordedArgumentsError) as info:
        check_coverage(Ctor(3), Ctor, {"size": 3, "sise": 3, "old": 1}, "the record", FIX)
    assert str(info.value).startswith(
        f"{__name__}.Ctor recorded 'old', 'sise' through the record, but its constructor "
        "takes no such argument, so a rebuild would raise TypeError;")


def test_coverage_refuses_a_stored_non_default_value_and_notes_defaults() -> None:
    with pytest.raises(UnrecordedArgumentsError, match=r"was built with scale=2\.5 but the "
                       r"record did not record it, so a rebuild would silently use the "
                       r"default scale=1\.0"):
        check_coverage(Ctor(3, 2.5), Ctor, {"size": 3}, "the record", FIX)
    assert check_coverage(Ctor(3), Ctor, {"size": 3}, "the record", FIX) == [
        "scale=1.0", "mode='a'"]
    # a class whose signature cannot be read is not checked
    assert check_coverage(object(), type, {}, "the record", FIX) == []
    # anything goes with **kwargs
    assert check_coverage(Splat(), Splat, {"x": 1}, "the record", FIX) == []


def test_coverage_compares_arrays_by_value_and_incomparable_values_as_different() -> None:
    assert check_coverage(Arr(None), Arr, {}, "src", FIX) == ["weights=None"]
    with pytest.raises(UnrecordedArgumentsError, match="was built with weights="):
        check_coverage(Arr(np.ones(3)), Arr, {}, "src", FIX)
    with pytest.raises(UnrecordedArgumentsError, match="was built with value="):
        check_coverage(Weird(Incomparable()), Weird, {}, "src", FIX)


def test_evidence_kwargs_only_when_every_parameter_is_stored() -> None:
    params = init_params(Ctor) or []
    assert evidence_kwargs(Ctor(3, 2.0, mode="b"), params) == {
        "size": 3, "scale": 2.0, "mode": "b"}
    bare = Ctor(3)
    del bare.mode
    assert evidence_kwargs(bare, params) is None

    class Rendered:
        render_mode = "rgb_array"  # a class attribute, as gymnasium envs often have

        def __init__(self, render_mode: str | None = None) -> None:
            pass

    assert evidence_kwargs(Rendered(), init_params(Rendered) or []) == {
        "render_mode": "rgb_array"}

    def positional(a: int, /) -> None: ...

    only = list(inspect.signature(positional).parameters.values())
    assert evidence_kwargs(object(), only) is None


def test_ezpickle_kwargs_are_read_by_name_including_var_keywords() -> None:
    class Keywords:
        def __init__(self, size: int, **options: Any) -> None:
            pass

    obj = Keywords.__new__(Keywords)
    obj._ezpickle_args, obj._ezpickle_kwargs = (3,), {"fast": True}  # type: ignore[attr-defined]
    assert ezpickle_kwargs(obj, Keywords) == {"size": 3, "fast": True}
    assert ezpickle_kwargs(object(), Keywords) is None


def test_ezpickle_positional_extras_cannot_be_passed_by_name() -> None:
    obj = Splat.__new__(Splat)
    obj._ezpickle_args, obj._ezpickle_kwargs = (1, 2), {}  # type: ignore[attr-defined]
    with pytest.raises(UnrecordedArgumentsError, match=r"Splat takes \*parts, which cannot be "
                       "passed by name; capture the class with explicit arguments instead"):
        ezpickle_kwargs(obj, Splat)
    obj._ezpickle_args = ()  # type: ignore[attr-defined]
    assert ezpickle_kwargs(obj, Splat) == {}


# -- wrapper recorders, through capture -----------------------------------------------------------


class Scaled(gymnasium.Wrapper):  # type: ignore[type-arg]
    def __init__(self, env: Any, factor: float = 1.0) -> None:
        super().__init__(env)
        self.k = factor


class ScaledTwice(gymnasium.Wrapper):  # type: ignore[type-arg]
    def __init__(self, env: Any, factor: float = 1.0) -> None:
        super().__init__(env)
        self.k = factor


def failing_recorder(node: Any) -> dict[str, Any]:
    return {"factor": node.factor}  # the attribute is called k


def test_a_recorder_that_raises_is_refused_naming_it() -> None:
    specpack.register_recorder(Scaled, failing_recorder)
    env = Scaled(gymnasium.make("CartPole-v1"), factor=2.0)
    with pytest.raises(UnrecordedArgumentsError) as info:
        specpack.capture(env)
    text = str(info.value)
    assert f"the recorder registered for {__name__}.Scaled failed on this instance " \
           "(AttributeError:" in text


def test_a_recorder_that_returns_no_mapping_is_refused_and_env_is_dropped() -> None:
    specpack.register_recorder(ScaledTwice, functools.partial(lambda node: [node.k]))
    env = ScaledTwice(gymnasium.make("CartPole-v1"), factor=2.0)
    with pytest.raises(UnrecordedArgumentsError, match=f"the recorder registered for "
                       f"{__name__}.ScaledTwice returned list, not a mapping of argument names"):
        specpack.capture(env)
    specpack.register_recorder(ScaledTwice, lambda node: {"env": node.env, "factor": node.k})
    pack = specpack.capture(env)
    assert dict(pack.layers[0].kwargs) == {"factor": 2.0}
