"""Fixtures shared by the capture tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gymnasium.envs.registration import registry


@pytest.fixture
def ids() -> Iterator[list[str]]:
    """The env ids a test registers (it appends them); each is unregistered afterwards."""
    made: list[str] = []
    yield made
    for name in made:
        registry.pop(name, None)
