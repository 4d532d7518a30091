"""A bare interpreter: a fresh ``python`` that sees only what an installed node would have.

:func:`command` starts ``python -s`` without ``PYTHONPATH`` and with a plan (this process's own
folders to hide, the paths to keep); :func:`enter`, in the child, hides them in a private mount
namespace, else a user namespace, else with an audit hook. :func:`lacking` names what it lacked.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import re
import site
import sys
import sysconfig
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["AUDIT", "FORCE_VARIABLE", "MOUNT", "USERNS", "command", "enter", "hidden",
           "lacking", "read_report", "summary"]

MOUNT, USERNS, AUDIT = "mount namespace", "user namespace", "audit hook"
#: Private: ``mount``/``userns``/``audit`` makes the parent's bare children use that
#: mechanism first (tests force the fallbacks with it).
FORCE_VARIABLE = "SPECPACK_BARE_FORCE"
_FORCED = {"mount": [MOUNT, AUDIT], "userns": [USERNS, AUDIT], "audit": [AUDIT]}
#: The plan the parent hands the child (JSON); the child deletes it.
PLAN_VARIABLE = "SPECPACK_BARE_PLAN"
#: Variables that point an interpreter at this machine's own files (the rest are kept).
DROPPED = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONINSPECT", "PYTHONSAFEPATH")
#: Never hidden: the system's own trees (the bind-backs read /proc/self/fd).
_SYSTEM = ("/", "/proc", "/dev", "/sys")
#: The child's boot before the worker loop: this file on its own (no package import: numpy's
#: thread pool would make a user namespace impossible).
PRELUDE = (
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('_specpack_bare', {source!r})\n"
    "bare = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(bare)\n"
    "bare.enter()\n"
    "del bare, spec\n"
)
_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 2, 4, 4096, 16384, 1 << 18


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _installed() -> list[str]:
    """This interpreter's standard library and site-packages folders."""
    paths = sysconfig.get_paths()
    found = [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]
    with contextlib.suppress(Exception):
        found += site.getsitepackages()
    with contextlib.suppress(Exception):
        found.append(site.getusersitepackages())
    return [_real(p) for p in found]


def _hide_candidates(pythonpath: str, hide: Iterable[str]) -> list[str]:
    """The folders a bare child hides: this process's user ``sys.path`` entries, the
    ``PYTHONPATH`` entries, the working directory and ``hide`` (a file: its folder)."""
    installed = _installed()
    entries = [p or os.getcwd() for p in sys.path]
    entries = [p for p in entries if not any(_within(_real(p), i) for i in installed)]
    out: list[str] = []
    for p in [*entries, *filter(None, pythonpath.split(os.pathsep)), os.getcwd(), *hide]:
        real = _real(os.fspath(p))
        if os.path.isfile(real):
            real = os.path.dirname(real)
        if os.path.isdir(real) and real not in _SYSTEM and real not in out:
            out.append(real)
    return out


def _mechanisms() -> list[str]:
    forced = os.environ.get(FORCE_VARIABLE, "")
    if forced:
        if forced not in _FORCED:
            from .._errors import SpecPackError

            raise SpecPackError(f"{FORCE_VARIABLE}={forced!r} is not one of "
                                f"{', '.join(_FORCED)}; unset it")
        return _FORCED[forced]
    return [MOUNT, USERNS, AUDIT] if sys.platform.startswith("linux") else [AUDIT]


def command(environment: Mapping[str, str], *, home: str, hide: Iterable[str],
            keep: Iterable[str | None], report: str, loop: str) -> tuple[list[str], dict[str, str]]:
    """A bare child's command line and environment, from a fresh interpreter's ``environment``
    (``hide``, ``keep``: more paths to hide, to keep); it runs ``loop`` once hidden (``report``)."""
    env = {k: v for k, v in environment.items() if k not in DROPPED}
    cache = environment.get("SPECPACK_CACHE") or os.path.join(
        environment.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "specpack")
    kept = [*keep, cache, environment.get("TMPDIR"), os.path.join(home, "specpack")]
    plan = {"hide": _hide_candidates(environment.get("PYTHONPATH", ""), hide),
            "keep": [_real(p) for p in kept if p], "home": home, "report": report,
            "mechanisms": _mechanisms()}
    env[PLAN_VARIABLE] = json.dumps(plan)
    flags = ["-s", "-P"] if sys.version_info >= (3, 11) else ["-s"]
    boot = PRELUDE.format(source=os.path.abspath(__file__)) + loop
    return [sys.executable, *flags, "-c", boot], env


def hidden(path: str, rules: Sequence[tuple[str, bool]]) -> bool:
    """Whether ``path`` (real, absolute) is hidden: the deepest rule ``(folder, hide)``
    whose folder holds it decides (no rule: visible)."""
    best, hide = -1, False
    for folder, is_hidden in rules:
        if len(folder) > best and _within(path, folder):
            best, hide = len(folder), is_hidden
    return hide


def _rules(plan: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """This child's rules, shallow first: the plan's hidden folders not inside a needed path,
    and every needed path (and prefix) inside a hidden folder, shown."""
    needed = [_real(p) for p in sys.path if p and os.path.exists(p)]
    needed += [_real(p) for p in plan["keep"]]
    needed += [_real(os.path.dirname(exe)) for exe in (sys.executable, _real(sys.executable))]
    prefixes = [_real(p) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix,
                                   sys.base_exec_prefix)]
    hide = [h for h in plan["hide"] if not any(_within(h, n) for n in needed)]
    show = [s for s in dict.fromkeys(needed + prefixes)
            if s not in hide and any(_within(s, h) for h in hide)]
    rules = sorted([(h, True) for h in hide] + [(s, False) for s in show],
                   key=lambda r: (r[0].count("/"), r[0]))
    kept: list[tuple[str, bool]] = []  # only the rules that change something
    for path, is_hidden in rules:
        if hidden(path, kept) != is_hidden:
            kept.append((path, is_hidden))
    return kept


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _namespace(user: bool, rules: list[tuple[str, bool]]) -> None:
    """Enter a private mount namespace (in a new user namespace when ``user``): a tmpfs over each
    hidden folder, each shown path bound back from the real one (``rules`` as :func:`_rules`
    gives them: each changes what the rules before it decide)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                           ctypes.c_char_p]
    uid, gid = os.geteuid(), os.getegid()
    _check(libc.unshare(_CLONE_NEWNS | (_CLONE_NEWUSER if user else 0)), "unshare")
    if user:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                           ("gid_map", f"{gid} {gid} 1")):
            fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
    _check(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "make / rprivate")
    # opened in this namespace (a bind from another one is refused), before anything is hidden
    sources = {p: os.open(p, os.O_PATH) for p, hide in rules if not hide and os.path.exists(p)}
    try:
        for path, hide in rules:
            if hide and os.path.isdir(path):
                _check(libc.mount(b"tmpfs", os.fsencode(path), b"tmpfs",
                                  _MS_NOSUID | _MS_NODEV, b"mode=755"), f"tmpfs over {path}")
            elif not hide and path in sources:
                if os.path.isdir(f"/proc/self/fd/{sources[path]}"):
                    os.makedirs(path, exist_ok=True)
                else:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    open(path, "a").close()
                _check(libc.mount(f"/proc/self/fd/{sources[path]}".encode(),
                                  os.fsencode(path), None, _MS_BIND | _MS_REC, None),
                       f"bind {path} back")
    finally:
        for fd in sources.values():
            os.close(fd)


#: Audit events that touch a path, and the positions of their path arguments.
_EVENTS = {"open": (0,), "os.listdir": (0,), "os.scandir": (0,), "os.mkdir": (0,),
           "os.remove": (0,), "os.rmdir": (0,), "os.rename": (0, 1), "os.link": (0, 1),
           "os.symlink": (0, 1), "os.truncate": (0,), "os.chmod": (0,), "os.chown": (0,),
           "os.utime": (0,), "os.chdir": (0,), "ctypes.dlopen": (0,)}


def _audit_hook(rules: list[tuple[str, bool]]) -> None:
    """Refuse every open, listing or change under a hidden folder: an import there finds nothing."""
    busy = [False]

    def hook(event: str, args: tuple[Any, ...]) -> None:
        where = _EVENTS.get(event)
        if where is None or busy[0]:
            return
        busy[0] = True
        try:
            for value in (args[i] for i in where if i < len(args)):
                if isinstance(value, (str, bytes, os.PathLike)):
                    path = _real(os.fsdecode(value))
                    if hidden(path, rules):
                        raise PermissionError(errno.EACCES, "hidden from a bare rebuild (a "
                                              "node without this folder would not have it)",
                                              path)
        finally:
            busy[0] = False

    sys.addaudithook(hook)


def enter() -> None:
    """In a bare child's boot: hide what the plan says by the first mechanism that works, and
    write the report (nothing without a plan)."""
    text = os.environ.pop(PLAN_VARIABLE, None)
    if text is None:
        return
    plan = json.loads(text)
    rules = _rules(plan)
    failed: list[str] = []
    mechanism = AUDIT
    for name in plan["mechanisms"] if rules else []:
        if name == AUDIT:
            break
        try:
            _namespace(name == USERNS, rules)
            mechanism = name
            break
        except Exception as e:  # noqa: BLE001 - the next mechanism; the report says why
            failed.append(f"{name}: {e}")
            if "unshare" not in str(e):  # already inside a namespace: only the hook is left
                break
    if mechanism == AUDIT and rules:
        _audit_hook(rules)
    report = {"mechanism": mechanism if rules else "nothing to hide", "failed": failed,
              "rules": rules}
    with contextlib.suppress(OSError), open(plan["report"], "w") as fh:
        json.dump(report, fh)


def read_report(path: str | None) -> dict[str, Any] | None:
    """What a bare child wrote about its hiding (``None``: nothing, e.g. it never started)."""
    if path is None:
        return None
    try:
        with open(path) as fh:
            data = json.load(fh)
        data["rules"] = [(str(p), bool(h)) for p, h in data["rules"]]
        return data  # type: ignore[no-any-return]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def summary(report: Mapping[str, Any] | None) -> str:
    """One note line: which mechanism hid which folders (and what stayed visible in them)."""
    if report is None:
        return "bare: the bare interpreter sent no report of what it hid"
    hid = [p for p, h in report["rules"] if h]
    shown = [p for p, h in report["rules"] if not h]
    text = f"bare: {report['mechanism']}"
    if hid:
        text += f" hid {', '.join(hid)}"
    if shown:
        text += f" (kept visible inside: {', '.join(shown)})"
    if report.get("failed"):
        text += f"; not available: {'; '.join(report['failed'])}"
    return text


_MODULE = re.compile(r"No module named '([\w.]+)'")
_FIX_MODULE = "install it on the node, or capture(..., self_contained=True)"
_FIX_FILE = ("copy it there, or capture(..., self_contained=True) to carry it (name it in "
             "assets=[...] if no argument names it)")


def _module_location(name: str, rules: Sequence[tuple[str, bool]]) -> str | None:
    """Where module ``name`` (or a parent package) lives here if a bare child cannot see it (a
    hidden folder, or the user site ``-s`` leaves out); no code runs to find it."""
    user: str | None = None
    with contextlib.suppress(Exception):
        user = _real(site.getusersitepackages())

    def lacked(spot: str) -> bool:
        real = _real(spot)
        return hidden(real, rules) or (user is not None and _within(real, user))

    parts = name.split(".")
    for n in (".".join(parts[:i]) for i in range(len(parts), 0, -1)):
        module = sys.modules.get(n)
        attrs = vars(module) if module is not None else {}
        spots = [*list(attrs.get("__path__") or [])[:1], attrs.get("__file__")]
        for spot in spots:
            if isinstance(spot, str) and lacked(spot):
                return spot
    top = parts[0]
    for folder in [p for p, h in rules if h] + [p for p in sys.path if p]:
        for spot in (os.path.join(folder, top), os.path.join(folder, top + ".py")):
            if os.path.exists(spot) and lacked(spot):
                return spot
    return None


def lacking(texts: Iterable[str], report: Mapping[str, Any] | None) -> list[str]:
    """What a bare node would lack, read from a rebuild's error texts: each module that lived in
    a hidden folder, each hidden path an error names (traceback frame lines left out)."""
    if not report:
        return []
    rules = report["rules"]
    out: list[str] = []
    places: list[str] = []
    lines = [ln for t in texts for ln in t.splitlines() if not ln.strip().startswith('File "')]
    for name in dict.fromkeys(m for ln in lines for m in _MODULE.findall(ln)):
        where = _module_location(name, rules)
        if where is not None:
            places.append(_real(where))
            out.append(f"on a bare node, {name} (from {where}) is not installed: {_FIX_MODULE}")
    folders = sorted((p for p, h in rules if h), key=len, reverse=True)
    found: list[str] = []
    for ln in lines:
        for folder in folders:
            for m in re.finditer(re.escape(folder) + r"(/[^\s'\",:;)]*)?", ln):
                path = m.group(0)
                if (path not in found and os.path.lexists(path) and hidden(_real(path), rules)
                        and not any(_within(path, p) for p in found + places)):
                    found.append(path)
    out += [f"on a bare node, {path} does not exist: {_FIX_FILE}" for path in found]
    return out
