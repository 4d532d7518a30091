"""Inside a daemonic worker (a ``multiprocessing.Pool`` worker), a spawn child cannot be
started: verify says so and names the boundary that works there, which does."""

from __future__ import annotations

import multiprocessing

import specpack


def verify_in(where: str) -> tuple[str, str, str]:
    try:
        report = specpack.verify(specpack.capture("CartPole-v1"), steps=3, where=where)
    except Exception as e:  # noqa: BLE001 - the outcome is the test's subject
        return ("raised", type(e).__name__, str(e))
    return ("report", report.status, "")


def test_verify_from_a_pool_worker_refuses_spawn_and_subprocess_works_there() -> None:
    # close and join, not terminate (what `with Pool` does): terminate SIGTERMs the workers,
    # and after a test that ran Ray (whose SIGTERM handler raises SystemExit) a worker hit
    # during its own exit under coverage (whose os._exit wrapper lets SystemExit through)
    # unwinds into this test and runs the rest of the session (see test_no_escape.py).
    pool = multiprocessing.get_context("fork").Pool(1)
    try:
        spawn, subprocess = pool.map(verify_in, ["spawn", "subprocess"])
    finally:
        pool.close()
        pool.join()
    kind, name, message = spawn
    assert (kind, name) == ("raised", "SpecPackError"), spawn
    assert message.startswith("cannot start a spawn child from this process (")
    assert message.endswith("use where='subprocess' (a fresh interpreter) instead")
    assert subprocess == ("report", "identical", ""), subprocess
