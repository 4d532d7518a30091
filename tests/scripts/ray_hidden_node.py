"""A Ray worker node on this machine that cannot see some folders ("another machine").

:func:`start_hidden_node` runs ``ray start --address=HEAD --block`` inside a private mount
namespace (``unshare --mount --propagation private``, as root) in which each folder to hide
has an empty tmpfs mounted over it. Only mounts differ: the node joins the head over TCP,
shares the session folder under RAY_TMPDIR, and sees the same installed distributions, so it
is the node of a cluster whose machines were installed alike but do not share the user's
project. The mounts are private to the namespace (the host never sees them) and vanish with
its last process.

:meth:`HiddenNode.stop` ends it without ``ray stop`` (which would end every Ray process of
this user on the machine): SIGTERM to the ``ray start --block`` process, which stops the
node's own processes, then SIGKILL, by pid, to anything still in the namespace.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: Mounts an empty tmpfs over each argument before ``--``, then execs what follows it.
_HIDE_THEN_EXEC = (
    'set -e; while [ "$1" != "--" ]; do mount -t tmpfs -o size=1m,mode=0755 tmpfs "$1"; '
    'shift; done; shift; exec "$@"'
)


def mount_ns(pid: int | str = "self") -> str | None:
    """The mount namespace of process ``pid`` (``mnt:[inode]``), or None once it is gone."""
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None


def ns_members(ns: str) -> dict[int, str]:
    """The live processes in mount namespace ``ns`` (pid: command line), read from /proc."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or mount_ns(entry.name) != ns:
            continue
        try:
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        found[int(entry.name)] = cmd.strip()[:200]
    return found


@dataclass
class HiddenNode:
    """A running ``ray start --block`` in its own mount namespace, and how to end it."""

    proc: subprocess.Popen[bytes]
    ns: str
    log: Path
    hidden: tuple[str, ...]
    survivors: dict[int, str] = field(default_factory=dict)

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the node's ``ray start`` output (for error messages)."""
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, grace: float = 30) -> dict[int, str]:
        """End the node; return the processes still in its namespace after ``grace`` seconds.

        Those survivors (Ray's own shutdown should leave none) are killed by pid, and the
        namespace is then checked to be empty.
        """
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and (self.proc.poll() is None or ns_members(self.ns)):
            time.sleep(0.2)
        self.survivors = ns_members(self.ns)
        for pid in self.survivors:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        deadline = time.monotonic() + 10
        while ns_members(self.ns) and time.monotonic() < deadline:
            time.sleep(0.2)
        return self.survivors


def start_hidden_node(
    address: str,
    hide: Sequence[str | os.PathLike[str]],
    *,
    resources: Mapping[str, float],
    log: Path,
    env: Mapping[str, str] | None = None,
    num_cpus: int = 1,
    timeout: float = 30,
) -> HiddenNode:
    """Start a Ray worker node joined to ``address`` in a mount namespace hiding ``hide``.

    Parameters
    ----------
    address
        The head's GCS address (``host:port``).
    hide
        Existing folders that the node's processes see as empty.
    resources
        Custom resources of the node (tasks pinned to it ask for them).
    log
        File that receives ``ray start``'s output.
    env
        Variables added to this process's environment for the node (its workers inherit
        them).
    num_cpus
        CPUs the node offers.
    timeout
        Seconds to wait for the process to enter its namespace.

    Returns
    -------
    HiddenNode
        The running node; call :meth:`HiddenNode.stop` (in a ``finally``) to end it.
    """
    ray_start = [
        sys.executable, "-m", "ray.scripts.scripts", "start", f"--address={address}",
        f"--num-cpus={num_cpus}", "--num-gpus=0", f"--resources={json.dumps(dict(resources))}",
        "--object-store-memory=157286400", "--min-worker-port=0", "--max-worker-port=0",
        "--dashboard-agent-listen-port=0", "--include-log-monitor=False",
        "--disable-usage-stats", "--block",
    ]
    paths = [str(Path(p).resolve()) for p in hide]
    cmd = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", _HIDE_THEN_EXEC,
           "sh", *paths, "--", *ray_start]
    own = mount_ns()
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})}, cwd="/")
    deadline = time.monotonic() + timeout
    while True:
        ns = mount_ns(proc.pid)
        try:
            cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        except OSError:
            cmdline = b""
        # In its own namespace, and past the mounts: `sh` has exec'd Python.
        if ns is not None and ns != own and b"ray.scripts" in cmdline:
            return HiddenNode(proc, ns, log, tuple(paths))
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            raise RuntimeError(
                f"the hidden Ray node did not start (exit {proc.returncode}): "
                f"{log.read_text(errors='replace')[-4000:]}"
            )
        time.sleep(0.05)
