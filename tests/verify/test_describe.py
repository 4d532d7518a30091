"""What verify compares: values and spaces turned into data that is alike on every side.

``plain`` keeps what typed JSON carries exactly, digests big or object arrays, and describes
anything else by its type and content (never by a memory address, which differs between
processes); ``describe_space`` describes spaces by structure and never raises.
"""

from __future__ import annotations

import collections
import collections.abc
import enum
from typing import Any

import gymnasium
import numpy as np

from specpack._verify.describe import SMALL, describe_space, plain, type_name


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


class Unreadable(collections.abc.Mapping):  # type: ignore[type-arg]
    """A mapping that raises when its items are read."""

    def __getitem__(self, key: str) -> Any:
        raise LookupError("cannot read me")

    def __iter__(self) -> Any:
        raise RuntimeError("cannot iterate me")

    def __len__(self) -> int:
        return 1


class Opaque:
    pass


def test_subclasses_of_builtins_are_described_by_type_and_value() -> None:
    mod = __name__
    assert plain(Colour.RED) == (f"<{mod}.Colour>", 3)
    assert plain(Metres(1.5)) == (f"<{mod}.Metres>", 1.5)
    assert plain(Name("x")) == (f"<{mod}.Name>", "x")
    assert plain(Raw(b"y")) == (f"<{mod}.Raw>", b"y")
    assert plain(Items([1, (2,)])) == (f"<{mod}.Items>", [1, (2,)])
    assert plain(Point(1, 2)) == (f"<{mod}.Point>", {"x": 1, "y": 2})
    assert plain(ReadOnly(k=[1])) == (f"<{mod}.ReadOnly>", {"k": [1]})
    # a plain int and an IntEnum are told apart
    assert plain(3) != plain(Colour.RED)


def test_an_object_is_described_without_its_memory_address() -> None:
    a, b = plain(Opaque()), plain(Opaque())
    assert a == b == (f"<{__name__}.Opaque>", f"<{__name__}.Opaque object>")


def test_a_value_that_cannot_be_read_is_described_by_its_failure() -> None:
    kind, text = plain(Unreadable())
    assert kind == f"<{__name__}.Unreadable>"
    assert text.startswith("unreadable (") and "cannot iterate me" in text


def test_big_object_and_structured_arrays_are_digests_equal_for_equal_content() -> None:
    big = plain(np.zeros(SMALL + 1))
    assert big[:3] == ("<array>", "<f8", (SMALL + 1,)) and len(big[3]) == 64
    assert plain(np.zeros(SMALL + 1)) == big and plain(np.ones(SMALL + 1)) != big
    objects = plain(np.array([1, None], dtype=object))
    assert objects[:3] == ("<array>", "|O", (2,))
    assert plain(np.array([1, None], dtype=object)) == objects
    assert plain(np.array([2, None], dtype=object)) != objects
    void = plain(np.void(b"ab"))
    assert void[:3] == ("<array>", "|V2", ())
    small = np.arange(3.0)
    kept = plain(small)
    assert isinstance(kept, np.ndarray) and kept is not small
    np.testing.assert_array_equal(kept, small)
    assert plain(np.float32(2)) == np.float32(2)


def test_containers_keep_their_type_and_deep_nesting_stops() -> None:
    assert plain({1, 2}) == {1, 2} and type(plain(frozenset([1]))) is frozenset
    assert plain({"a": (1, [2])}) == {"a": (1, [2])}
    nested: list[Any] = []
    for _ in range(60):
        nested = [nested]
    out = plain(nested)
    depth = 0
    while isinstance(out, list):
        out = out[0]
        depth += 1
    assert out == ("<list>", "nested too deeply") and depth == 41


def test_type_name_is_short_for_builtins() -> None:
    assert type_name(int) == "int"
    assert type_name(gymnasium.spaces.Box) == "gymnasium.spaces.box.Box"


def test_spaces_are_described_by_structure_with_their_sub_spaces() -> None:
    graph = describe_space(
        gymnasium.spaces.Graph(gymnasium.spaces.Box(0, 1, (2,)), gymnasium.spaces.Discrete(3)))
    assert graph["type"] == "gymnasium.spaces.graph.Graph"
    assert graph["node_space"]["type"] == "gymnasium.spaces.box.Box"
    assert graph["node_space"]["dtype"] == "<f4" and graph["node_space"]["shape"] == (2,)
    assert graph["edge_space"]["n"] == 3
    d = describe_space(gymnasium.spaces.Dict({"a": gymnasium.spaces.Discrete(2)}))
    assert d["spaces"] == [["a", describe_space(gymnasium.spaces.Discrete(2))]]
    t = describe_space(gymnasium.spaces.Tuple((gymnasium.spaces.Discrete(2),)))
    assert [s["n"] for s in t["spaces"]] == [2]
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
    assert broken["n"] == 3 and broken["error"] == "ValueError: broken nvec"


def test_a_space_nested_too_deeply_is_described_as_such() -> None:
    assert describe_space(gymnasium.spaces.Discrete(2), depth=41) == {
        "type": "gymnasium.spaces.discrete.Discrete", "error": "nested too deeply"}
