"""What verify compares: values and spaces turned into data that is alike on every side.

``plain`` encodes every value exactly (type and bits; objects by the parts pickle takes, never
by a memory address, which differs between processes), digests big values and marks what has
no exact encoding; ``describe_space`` describes spaces by structure and never raises.
"""

from __future__ import annotations

import collections
import collections.abc
import enum
from typing import Any

import gymnasium
import numpy as np

from specpack._core._exact.describe import SMALL, describe_space, plain, type_name
from specpack._core._exact.nodes import DIGEST, NOT_COMPARABLE, equal


class Colour(enum.IntEnum):
    RED = 3


class Metres(float):
    pass


class Name(str):
    pass


class Raw(bytes):
    pass


class Items(list):  # type: ignore[type-arg]
    pass


Point = collections.namedtuple("Point", "x y")


class ReadOnly(collections.abc.Mapping):  # type: ignore[type-arg]
    def __init__(self, **items: Any) -> None:
        self._items = items

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Any:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


class Unpicklable:
    """An object pickle refuses (its state cannot be read)."""

    def __getstate__(self) -> Any:
        raise RuntimeError("cannot read my state")


class Opaque:
    pass


def test_subclasses_of_builtins_are_encoded_by_type_and_value() -> None:
    mod = __name__
    assert plain(Colour.RED) == ["enum", f"{mod}.Colour", "RED", 3]
    assert plain(Point(1, 2)) == ["namedtuple", f"{mod}.Point", [["x", 1], ["y", 2]]]
    for make, other in ((Metres, 2.5), (Name, "y"), (Raw, b"z"), (Items, [3])):
        value = make(1.5) if make is Metres else make("x" if make is Name else
                                                      b"y" if make is Raw else [1, (2,)])
        again = make(value)
        assert plain(value)[:2] == ["object", f"{mod}.{make.__name__}"]
        assert equal(plain(value), plain(again)) and not equal(plain(value), plain(make(other)))
    assert equal(plain(ReadOnly(k=[1])), plain(ReadOnly(k=[1])))
    assert not equal(plain(ReadOnly(k=[1])), plain(ReadOnly(k=[1.0])))
    # a plain int and an IntEnum are told apart, and so are a float and its subclass
    assert not equal(plain(3), plain(Colour.RED))
    assert not equal(plain(1.5), plain(Metres(1.5)))


def test_an_object_is_encoded_by_its_pickle_parts_without_its_memory_address() -> None:
    a, b = plain(Opaque()), plain(Opaque())
    assert a[:2] == ["object", f"{__name__}.Opaque"] and equal(a, b)
    assert "0x" not in repr(a)


def test_a_value_pickle_refuses_is_marked_not_comparable_and_never_equal() -> None:
    marker = plain(Unpicklable())
    assert marker[:2] == [NOT_COMPARABLE, f"{__name__}.Unpicklable"]
    assert marker[2].startswith("cannot be pickled: ") and "cannot read my state" in marker[2]
    assert not equal(marker, marker)
    assert not equal(plain([Unpicklable()]), plain([Unpicklable()]))


def test_big_object_and_structured_arrays_are_exact_and_big_ones_digests() -> None:
    big = plain(np.zeros(SMALL + 1))
    assert big[:3] == [DIGEST, "numpy.ndarray", f"float64 array of shape ({SMALL + 1},)"]
    assert len(big[3]) == 64
    assert plain(np.zeros(SMALL + 1)) == big and plain(np.ones(SMALL + 1)) != big
    objects = plain(np.array([1, None], dtype=object))
    assert objects == ["array", "numpy.ndarray", "|O", [2], ["list", "list", [1, None]], None]
    assert not equal(plain(np.array([2, None], dtype=object)), objects)
    void = plain(np.void(b"ab"))
    assert void[:3] == ["scalar", "numpy.void", "|V2"]
    kept = plain(np.arange(3.0))
    assert kept[:4] == ["array", "numpy.ndarray", "<f8", [3]]
    assert plain(np.float32(2))[:3] == ["scalar", "numpy.float32", "<f4"]


def test_containers_keep_their_type_and_deep_nesting_is_not_comparable() -> None:
    assert plain({1, 2}) == ["set", "set", [1, 2]]
    assert plain(frozenset([1]))[:2] == ["frozenset", "frozenset"]
    assert plain({"a": (1, [2])}) == ["dict", "dict", [["a", ["tuple", "tuple",
                                                               [1, ["list", "list", [2]]]]]]]
    nested: list[Any] = []
    for _ in range(100):
        nested = [nested]
    out = plain(nested)
    depth = 0
    while out[0] == "list":
        out = out[2][0]
        depth += 1
    assert out[0] == NOT_COMPARABLE and "nested more than" in out[2] and 50 < depth < 100


def test_type_name_is_short_for_builtins() -> None:
    assert type_name(int) == "int"
    assert type_name(gymnasium.spaces.Box) == "gymnasium.spaces.box.Box"


def test_spaces_are_described_by_structure_with_their_sub_spaces() -> None:
    graph = describe_space(
        gymnasium.spaces.Graph(gymnasium.spaces.Box(0, 1, (2,)), gymnasium.spaces.Discrete(3)))
    assert graph["type"] == "gymnasium.spaces.graph.Graph"
    assert graph["node_space"]["type"] == "gymnasium.spaces.box.Box"
    assert graph["node_space"]["dtype"] == "<f4" and graph["node_space"]["shape"] == plain((2,))
    assert equal(graph["edge_space"]["n"], plain(np.int64(3)))
    d = describe_space(gymnasium.spaces.Dict({"a": gymnasium.spaces.Discrete(2)}))
    assert d["spaces"] == [["a", describe_space(gymnasium.spaces.Discrete(2))]]
    t = describe_space(gymnasium.spaces.Tuple((gymnasium.spaces.Discrete(2),)))
    assert [s["n"] for s in t["spaces"]] == [plain(np.int64(2))]
    assert "repr" not in d and "error" not in d
    # equal spaces that are different objects describe alike
    assert describe_space(gymnasium.spaces.Discrete(2)) == describe_space(
        gymnasium.spaces.Discrete(2))


class CustomSpace(gymnasium.spaces.Space):  # type: ignore[type-arg]
    pass


class BrokenSpace(gymnasium.spaces.Discrete):
    @property
    def nvec(self) -> Any:
        raise ValueError("broken nvec")


def test_a_custom_space_gets_its_repr_and_a_broken_one_its_error() -> None:
    custom = describe_space(CustomSpace())
    assert custom["type"] == f"{__name__}.CustomSpace"
    assert custom["repr"] == f"<{__name__}.CustomSpace object>"
    broken = describe_space(BrokenSpace(3))
    assert broken["n"] == plain(np.int64(3)) and broken["error"] == "ValueError: broken nvec"


def test_a_space_nested_too_deeply_is_described_as_such() -> None:
    assert describe_space(gymnasium.spaces.Discrete(2), depth=21) == {
        "type": "gymnasium.spaces.discrete.Discrete", "error": "nested too deeply"}
