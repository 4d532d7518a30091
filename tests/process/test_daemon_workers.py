"""Inside a daemonic worker (a ``multiprocessing.Pool`` worker), a spawn child cannot be
started: verify says so and names the boundary that works there, which does."""

from __future__ import annotations

import multiprocessing

import specpack


def verify_in(where: str) -> tuple[str, str, str]:
    try:
        report = specpack.capture("CartPole-v1").verify(steps=3, where=where)
    except Exception as e:  # noqa: BLE001 - the outcome is the test's subject
        return ("raised", type(e).__name__, str(e))
    return ("report", report.status, "")


def test_verify_from_a_pool_worker_refuses_spawn_and_subprocess_works_there() -> None:
    with multiprocessing.get_context("fork").Pool(1) as pool:
        spawn, subprocess = pool.map(verify_in, ["spawn", "subprocess"])
    kind, name, message = spawn
    assert (kind, name) == ("raised", "SpecPackError"), spawn
    assert message.startswith("cannot start a spawn child from this process (")
    assert message.endswith("use where='subprocess' (a fresh interpreter) instead")
    assert subprocess == ("report", "identical", ""), subprocess
