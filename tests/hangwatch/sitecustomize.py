"""Stack dumps on demand for every Python process a test helper starts (and their children).

``tests/_helpers.run_process`` puts this folder on ``PYTHONPATH`` and sets
``SPECPACK_TEST_STACKS`` to a fresh folder; ``site`` imports this module at start-up in every
interpreter of the tree (fresh interpreters, spawn and forkserver workers inherit the
environment). Each one registers :data:`SIGNAL` with ``faulthandler``: the signal makes it
write every thread's stack into ``<folder>/<pid>.txt``. When the helper's timeout passes it
sends the signal to every process of the tree, reads the files and puts them in the failure
message, then kills the tree.

Why a signal and not ``faulthandler.dump_traceback_later``: its watchdog is a thread holding a
lock, and a child forked from an armed process (a fork or forkserver worker) hangs forever at
exit waiting for that thread, which does not exist in the child (CPython 3.11-3.13); the
thread also makes Python 3.12+ warn on every ``fork()``. A signal handler holds no lock and
starts no thread; a forked child re-registers it with its own file (``register_at_fork``).

Inert unless ``SPECPACK_TEST_STACKS`` is set. A ``sitecustomize`` found further down
``sys.path`` (a distribution's) still runs.
"""

from __future__ import annotations

import faulthandler
import importlib.machinery
import importlib.util
import os
import signal
import sys

#: The signal the helper sends for a dump (a real-time one: no library uses it).
SIGNAL = signal.SIGRTMIN + 5 if hasattr(signal, "SIGRTMIN") else None
_ENV = "SPECPACK_TEST_STACKS"
_file = None


def _header() -> str:
    try:
        with open(f"/proc/{os.getpid()}/cmdline", "rb") as fh:
            cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        cmd = " ".join(sys.argv)
    cmd = cmd.strip().replace("\n", "\\n")
    return f"pid {os.getpid()} (parent {os.getppid()}): {cmd}\n"


def _arm() -> None:
    """Open this process's dump file and register the signal to write into it."""
    global _file
    folder = os.environ.get(_ENV)
    if not folder or SIGNAL is None or not os.path.isdir(folder):
        return
    old = _file
    _file = open(os.path.join(folder, f"{os.getpid()}.txt"), "w")
    _file.write(_header())
    _file.flush()
    faulthandler.register(SIGNAL, file=_file, all_threads=True, chain=False)
    if old is not None:  # a forked child: the parent's file is the parent's
        old.close()


def _chain() -> None:
    """Run the ``sitecustomize`` this one shadows, if ``sys.path`` holds another."""
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


try:
    _arm()
    if _file is not None and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_arm)
except Exception as e:  # noqa: BLE001 - a watchdog must never stop the process it watches
    print(f"tests/hangwatch: no stack dumps in this process: {type(e).__name__}: {e}",
          file=sys.stderr)
_chain()
