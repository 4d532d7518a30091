"""specpack._record.frozen: a frozen dataclass's behaviour.

Each behaviour is checked against ``@dataclass(frozen=True)`` declaring the same fields, so the
generic methods mean what the generated ones meant: construction (positional, keyword-only,
defaults, factories, ``init=False`` fields, ``InitVar`` and ``__post_init__``), the errors a
bad call gets, frozenness, ``==``/``hash``/``repr``, ``dataclasses.fields``/``replace`` and
pickling.
"""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import InitVar, dataclass, field
from typing import Any

import pytest

from specpack._record import frozen


@frozen
class Point:
    """A plain record."""

    x: Any
    y: Any = 0


@dataclass(frozen=True)
class PointDC:
    """The same, as a dataclass."""

    x: Any
    y: Any = 0


@frozen(slots=True, kw_only=True, eq=False)
class Held:
    """Keyword-only, slotted, identity equality, a factory, an InitVar and a cache field."""

    name: str
    items: list[int] = field(default_factory=list)
    scale: InitVar[int] = 2
    doubled: int = field(default=0, init=False, repr=False)

    def __post_init__(self, scale: int) -> None:
        object.__setattr__(self, "doubled", scale * len(self.items))


@frozen(slots=True)
class Pair:
    """Slotted, with no ``__reduce__`` of its own (pickled by state)."""

    a: Any
    b: Any


def test_construction_matches_a_dataclass() -> None:
    for args, kwargs in [((1,), {}), ((1, 2), {}), ((), {"x": 1, "y": 2}), ((1,), {"y": 3})]:
        ours, theirs = Point(*args, **kwargs), PointDC(*args, **kwargs)
        assert (ours.x, ours.y) == (theirs.x, theirs.y)
        assert repr(ours) == repr(theirs).replace("PointDC", "Point")


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((), {}, "missing required argument: 'x'"),
    ((1, 2, 3), {}, "takes 2 positional arguments but 3 were given"),
    ((1,), {"x": 2}, "got multiple values for argument 'x'"),
    ((1,), {"z": 2}, "got an unexpected keyword argument 'z'"),
])
def test_a_bad_call_is_a_type_error_like_a_dataclass(args: tuple[Any, ...], kwargs: dict[str, Any],
                                                      message: str) -> None:
    with pytest.raises(TypeError):
        PointDC(*args, **kwargs)
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Point(*args, **kwargs)


@dataclass(frozen=True, kw_only=True)
class HeldDC:
    """Held's constructor, as a dataclass."""

    name: str
    items: list[int] = field(default_factory=list)
    scale: InitVar[int] = 2


def test_help_shows_the_constructor_a_dataclass_would_have() -> None:
    assert str(inspect.signature(Point)) == str(inspect.signature(PointDC))
    assert str(inspect.signature(Held)) == str(inspect.signature(HeldDC))


def test_keyword_only_refuses_positional_arguments() -> None:
    with pytest.raises(TypeError, match="takes 0 positional arguments"):
        Held("a")  # type: ignore[misc]


def test_factories_init_false_fields_and_initvars() -> None:
    a, b = Held(name="a"), Held(name="b", items=[1, 2, 3], scale=10)
    assert a.items == [] and a.items is not Held(name="c").items  # a fresh list each time
    assert (a.doubled, b.doubled) == (0, 30)
    assert [f.name for f in dataclasses.fields(Held)] == ["name", "items", "doubled"]
    assert not hasattr(a, "__dict__")
    assert a != Held(name="a")  # eq=False: identity
    c = dataclasses.replace(b, name="c")
    assert (c.name, c.items, c.doubled) == ("c", [1, 2, 3], 6)  # the InitVar's default again


@frozen(kw_only=True)
class Scaled:
    """An InitVar that may hold an array (compared by nothing but identity)."""

    name: str
    factor: InitVar[Any]
    size: int = field(default=0, init=False)

    def __post_init__(self, factor: Any) -> None:
        object.__setattr__(self, "size", len(factor))


class HeldChild(Held):
    """Not decorated itself: it takes Held's constructor."""


def test_an_array_initvar_and_an_undecorated_subclass_construct_as_a_dataclass() -> None:
    import numpy as np

    assert Scaled(name="a", factor=np.zeros(3)).size == 3
    with pytest.raises(TypeError, match="missing required argument: 'factor'"):
        Scaled(name="a")  # type: ignore[call-arg]
    assert HeldChild(name="c").name == "c"
    with pytest.raises(TypeError, match="takes 0 positional arguments"):
        HeldChild("c")  # type: ignore[misc]


def test_frozen_refuses_assignment_and_deletion() -> None:
    p, h = Point(1), Held(name="a")
    for obj in (p, h):
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.x = 2  # type: ignore[misc,attr-defined]
        with pytest.raises(dataclasses.FrozenInstanceError):
            del obj.name  # type: ignore[attr-defined]


def test_equality_and_hash_follow_the_fields_exactly_as_a_dataclass() -> None:
    # equal but not identical values compare as a dataclass compares them (tuple ==)
    for a, b in [((1, 2), (1, 2)), ((1, 2), (1.0, 2)), ((-0.0, 0), (0.0, 0)), ((1, 2), (2, 1)),
                 ((True, 0), (1, 0)), ((float("nan"), 0), (float("nan"), 0))]:
        assert (Point(*a) == Point(*b)) == (PointDC(*a) == PointDC(*b)), (a, b)
        if Point(*a) == Point(*b):
            assert hash(Point(*a)) == hash(Point(*b))
    assert Point(1) != PointDC(1) and Point(1) != (1, 0)
    with pytest.raises(TypeError):  # a field that cannot be hashed: as a dataclass
        hash(Point([1]))


def test_repr_of_a_record_that_holds_itself() -> None:
    box: list[Any] = []
    p = Point(box)
    box.append(p)
    assert repr(p) == "Point(x=[...], y=0)"


def test_pickling_a_slotted_record_by_its_state() -> None:
    p = Pair([1, 2], {"k": -0.0})
    q = pickle.loads(pickle.dumps(p))
    assert q == p and type(q) is Pair and str(q.b["k"]) == "-0.0"

