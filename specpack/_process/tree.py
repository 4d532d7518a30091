"""A worker child's process tree: adopt every orphan, and kill the whole tree at the end.

A job may start processes that leave the worker's process group and session
(``start_new_session=True``, ``setsid``) or double-fork so that their parent dies. On Linux the
worker child makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, which needs no
privilege): such orphans are then re-parented to it instead of to ``init``, so every process
the job started stays a descendant of the worker. :func:`kill_tree` stops the tree first
(``SIGSTOP``: a stopped process cannot fork, nor die and hand its children on), collects it
again until no new process shows up, then kills it with ``SIGKILL``.

Where ``prctl`` or ``/proc`` is missing (macOS, BSD), :func:`become_subreaper` returns False
and :func:`kill_tree` finds no descendants: the caller still kills the process group, which is
what those platforms offer.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

__all__ = ["become_subreaper", "descendants", "kill_tree"]

#: prctl option (linux/prctl.h).
_PR_SET_CHILD_SUBREAPER = 36
#: Rounds of stopping newly found descendants before giving up on a tree that keeps growing.
_ROUNDS = 50


def become_subreaper() -> bool:
    """Make this process adopt the orphans among its descendants (Linux); True if it did."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, list[int]]:
    """Each live pid's children, from ``/proc/*/stat`` (empty where there is no /proc)."""
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return children
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:  # gone meanwhile
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) < 2 or fields[0] == b"Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    return children


def descendants(root: int) -> set[int]:
    """The live (not zombie) processes below ``root`` (its children, theirs, ...)."""
    children = _parents()
    found: set[int] = set()
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            if pid not in found and pid != root:
                found.add(pid)
                todo.append(pid)
    return found


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, sig)


def kill_tree(root: int, *, include_root: bool = True) -> None:
    """SIGKILL every descendant of ``root`` (and ``root`` with ``include_root``).

    The tree is frozen first: ``root`` and each descendant found get ``SIGSTOP``, and the
    search repeats until it finds no new process (one that forked just before it stopped);
    then all of them get ``SIGKILL``. With ``include_root=False`` (a worker ending its own
    tree) ``root`` keeps running and is not signalled.

    Parameters
    ----------
    root
        The worker child's pid (a subreaper, so orphans stay below it).
    include_root
        Whether ``root`` itself is killed too.
    """
    stop = getattr(signal, "SIGSTOP", None)
    kill = getattr(signal, "SIGKILL", signal.SIGTERM)
    if stop is None:  # not POSIX: no tree to walk, no way to freeze one
        if include_root:
            _signal(root, kill)
        return
    if include_root:
        _signal(root, stop)
    frozen: set[int] = set()
    for _ in range(_ROUNDS):
        new = descendants(root) - frozen
        if not new:
            break
        for pid in new:
            _signal(pid, stop)
        frozen |= new
    for pid in frozen:
        _signal(pid, kill)
    if include_root:
        _signal(root, kill)
