"""Run the vec-env library tests' scripts (``run_*.py`` here) in a fresh interpreter, bounded.

Sample Factory and PufferLib both wait for ever for a worker that died: :func:`run_bounded`
never does, and says how the run ended.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SCRIPTS = ROOT / "tests" / "scripts"  # clients_common: the shared env-build counter and rollouts


@dataclasses.dataclass
class Outcome:
    """How a script run ended."""

    returncode: int | None  # None: killed by us (a timeout, or the wait after ``until``)
    stdout: str
    stderr: str
    timed_out: bool  # still running at the deadline
    still_waiting: bool  # still running ``grace`` seconds after ``until`` appeared on stderr

    def tails(self) -> str:
        return (f"exit {self.returncode}, timed out {self.timed_out}\nstdout:\n"
                f"{self.stdout[-3000:]}\nstderr:\n{self.stderr[-6000:]}")


def run_bounded(script: str, *args: str, cwd: Path, timeout: float,
                until: str | None = None, grace: float = 5.0) -> Outcome:
    """Run ``tests/integrations/adapters/<script> args`` as ``__main__`` in ``cwd``; kill it
    when bounded.

    The script runs in its own process group, killed whole (its workers too) when it is still
    running at ``timeout`` seconds, or ``grace`` seconds after ``until`` first appears on its
    stderr (a control that shows a library waiting for ever after its worker died).
    """
    env = dict(os.environ)
    env["CLIENTS_BUILDS"] = str(cwd / "builds.txt")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(SCRIPTS),
                                         *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.Popen(
        [sys.executable, str(HERE / script), *args], cwd=cwd, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    out: list[str] = []
    err: list[str] = []
    readers = [threading.Thread(target=lambda s=s, b=b: b.extend(s), daemon=True)  # type: ignore[misc]
               for s, b in ((proc.stdout, out), (proc.stderr, err))]
    for r in readers:
        r.start()
    deadline = time.monotonic() + timeout
    seen_at: float | None = None
    still_waiting = timed_out = False
    while proc.poll() is None:
        now = time.monotonic()
        if until is not None and seen_at is None and until in "".join(err):
            seen_at = now
        if seen_at is not None and now - seen_at >= grace:
            still_waiting = True
            break
        if now >= deadline:
            timed_out = True
            break
        time.sleep(0.2)
    code = proc.poll()
    try:  # the script's workers too, also those a finished script left behind
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=30)
    for r in readers:
        r.join(timeout=10)
    return Outcome(code, "".join(out), "".join(err), timed_out, still_waiting)
