"""One-line portability checks for an env package's own test suite: ``specpack audit`` of one
env, raising an ``AssertionError`` with the finding, so pytest shows what is wrong::

    import pytest
    from specpack.testing import assert_portable

    @pytest.mark.parametrize("env_id", ["my_pkg/Maze-v0", "my_pkg/Maze-v1"])
    def test_env_is_portable(env_id):
        assert_portable(env_id)
"""

from __future__ import annotations

from typing import Any

from ._core._process.launch import Boundary
from ._tools._audit.api import audit_one
from ._tools._audit.options import DEFAULT_TIMEOUT
from ._tools._audit.report import IDENTICAL, Finding

__all__ = ["assert_portable"]


def assert_portable(env_or_id: Any, *, steps: int = 50, seed: int = 0,
                    where: Boundary = "subprocess", timeout: float = DEFAULT_TIMEOUT) -> Finding:
    """Assert that ``env_or_id`` survives a process boundary; return the audit's finding.

    ``env_or_id`` is a registered id, a live env (inspected, never stepped), an ``EnvSpec``, an
    env class or factory, or a :class:`~specpack.SpecPack`. It is captured here and rebuilt in a
    fresh interpreter (or a ``where`` child); the spaces, the wrapper stack and a ``steps``-step
    rollout seeded with ``seed`` are compared, and the env must record its constructor
    arguments. Anything else raises ``AssertionError`` with the finding (status, differences,
    the worker's traceback).
    """
    finding = audit_one(env_or_id, steps=steps, seed=seed, where=where, timeout=timeout)
    if finding.status != IDENTICAL:
        raise AssertionError(_message(finding))
    return finding


def _message(f: Finding) -> str:
    lines = [f"{f.name} is not portable ({f.status}): {f.reason}"]
    lines += [f"  - {d}" for d in f.differences[1:]]
    if f.package:
        lines.append(f"  missing package: {f.package}")
    if f.detail:
        lines.append("  detail:")
        lines += [f"    {line}" for line in f.detail.rstrip().splitlines()[-25:]]
    return "\n".join(lines)
