"""gymnasium 1.4.0's own tests of ``make`` and ``EnvSpec``, run against specpack.

The files under ``gymnasium_tests/`` are Gymnasium's (see their headers); this conftest swaps
``gymnasium.make`` for the drop-in ``specpack.capture(id_or_spec, **kwargs).make()`` in every
one of their tests, so each ``gym.make(...)`` they call resolves in specpack, carries the
result as a pack and rebuilds the env from it. Tests that check a behaviour specpack differs
in on purpose are deselected here, each with its reason (docs/vs-gymnasium.md lists them).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import pytest

import specpack

#: Deselected on purpose: test id -> why (the documented difference).
DESELECTED: dict[str, str] = {
    "test_spec_with_unpickleable_object": (
        "passes make() a kwarg that does not pickle and expects a warning from env.spec; "
        "capture refuses such a kwarg at once (UncarriableValueError, a TypeError): a pack "
        "must cross a process boundary"
    ),
}


def specpack_make(env_id: Any, **kwargs: Any) -> Any:
    """``gymnasium.make`` through a pack: capture here, rebuild from the pack."""
    return specpack.capture(env_id, **kwargs).make()


@pytest.fixture(autouse=True)
def _make_through_specpack(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gymnasium, "make", specpack_make)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, dropped = [], []
    for item in items:
        (dropped if item.name in DESELECTED else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
