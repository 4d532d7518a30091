"""``make_vec(pack, 2, context="spawn")`` at a script's top level without the main guard: each
worker imports the script again and dies starting workers of its own. The parent's error used
to say only "worker 0 exited with code 1 ... is specpack importable in the worker?"; it names
the script, the line and the guard now, and each worker's own error says why it stopped. A
worker that dies for another reason in a guarded script gets no such hint."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from _helpers import SCRIPTS, run_python

CONTEXTS = [c for c in ("spawn", "forkserver") if c in multiprocessing.get_all_start_methods()]
GUARD = "outside an 'if __name__ == \"__main__\":' guard"


@pytest.mark.parametrize("context", CONTEXTS)
def test_a_worker_dying_in_an_unguarded_script_names_the_main_guard(
        tmp_path: Path, context: str) -> None:
    script = SCRIPTS / "vec_no_main_guard.py"
    proc = run_python([str(script), context], cwd=tmp_path)
    assert proc.returncode != 0 and "built" not in proc.stdout, proc.stdout + proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("specpack.WorkerError: make_vec(CartPole-v1, num_envs=2, "
                           f"context={context!r}): worker"), last
    assert f"the script {script} calls make_vec at line 11, {GUARD}" in last, last
    assert "Put the code that makes and runs the envs under 'if __name__ == \"__main__\":'" in last
    # each worker says it too, in its own stderr
    assert "make_vec was called while this process was starting as a worker" in proc.stderr


@pytest.mark.parametrize("context", CONTEXTS[:1])
def test_a_worker_dying_for_another_reason_in_a_guarded_script_gets_no_guard_hint(
        tmp_path: Path, context: str) -> None:
    proc = run_python([str(SCRIPTS / "vec_guarded_death.py"), context], cwd=tmp_path)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert "exited with code 3 before building its env" in last, last
    assert "guard" not in last and "Most likely cause" not in last, last
