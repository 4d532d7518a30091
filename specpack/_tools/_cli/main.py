"""``specpack``'s entry point: parse, run one command, turn errors into a message and an exit code.

Exit codes: 0 ok, 1 not identical (``verify``, ``check``) or not portable (``audit``), 2 bad
input or a failed build, 130 interrupted. An error is ONE ``specpack: error: ...`` line on stderr
naming the culprit and the fix as the command line applies it (a :class:`SpecPackError`'s
``cli`` fix: its flags, not Python's arguments); a line break in the message (from a file's
string or an env's exception) is escaped like every other string from a file or an env
(:func:`specpack._core._text.printable`), so it cannot pose as a line of its own. Only the refusal
of an untrusted file keeps its list of payloads, one escaped item a line. ``--debug``
(anywhere on the line) prints the traceback first, with specpack's classes named as users
import them (``specpack.BuildError``, never a private module's path). Warnings (e.g.
``VersionSkewWarning``) are one ``specpack: warning: ...`` line each.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Callable, Sequence

from ..._core._errors import SpecPackError, UntrustedPackError
from ..._core._text import format_exception, printable, public_names
from .output import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK, PROG, one_line_text
from .parsers import parse

__all__ = ["main"]

#: Subcommand -> the module of this package whose ``command(ns)`` runs it (imported on use,
#: so ``specpack --help`` stays fast).
_HANDLERS = {
    "capture": "capture",
    "inspect": "describe",
    "verify": "verify",
    "run": "run",
    "demo": "demo",
    "audit": "audit",
    "check": "check",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``specpack`` command line and return its exit code.

    Parameters
    ----------
    argv
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 ok, 1 not identical / not portable, 2 bad input or a failed build, 130 interrupted.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        ns = parse(args)
    except SystemExit as e:  # --help, --version, or a usage error already printed
        return e.code if isinstance(e.code, int) else EXIT_BAD_INPUT
    debug = bool(getattr(ns, "debug", False))
    module = importlib.import_module(f".{_HANDLERS[ns.command]}", __package__)
    handler: Callable[[argparse.Namespace], int] = module.command
    previous = warnings.formatwarning
    warnings.formatwarning = _format_warning
    try:
        return _guard(lambda: handler(ns), debug)
    finally:
        warnings.formatwarning = previous


def _format_warning(message: Warning | str, category: type[Warning], filename: str,
                    lineno: int, line: str | None = None) -> str:
    """A warning as one line, like errors."""
    return f"{PROG}: warning: {category.__name__}: {one_line_text(str(message), 2000)}\n"


def _guard(run: Callable[[], int], debug: bool) -> int:
    """Run a command; turn an error into one line on stderr and an exit code."""
    try:
        return run()
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (e.g. `specpack inspect f | head`): not an error of ours.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK
    except (SpecPackError, OSError) as e:
        message, worker = _message(e)
        if debug:
            print_traceback(e, worker)
        hint = ""
        cause = e.__cause__
        if not debug and ((cause is not None and not isinstance(cause, SpecPackError))
                          or bool(getattr(e, "child_traceback", None)) or bool(worker)):
            hint = " (run again with --debug for the traceback)"
        print(f"{PROG}: error: {message}{hint}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as e:  # noqa: BLE001 - the CLI promises one line, no traceback
        if debug:
            print_traceback(e)
        hint = "" if debug else " (run again with --debug for the traceback)"
        print(f"{PROG}: error: unexpected {_type_name(e)}: {_one_line(e)}{hint}",
              file=sys.stderr)
        return EXIT_BAD_INPUT


def print_traceback(e: BaseException, worker: str = "") -> None:
    """``--debug``'s traceback of ``e`` on stderr (and a worker's, when it carries one or its
    message holds one), each line escaped, specpack's classes under their public names."""
    text = format_exception(e)
    child = getattr(e, "child_traceback", "")
    for tail in (child if isinstance(child, str) else "", worker):
        if tail.strip():
            text += "The traceback in the worker:\n" + tail.strip("\n") + "\n"
    for line in public_names(text).splitlines():
        print(printable(line, limit=4000), file=sys.stderr)
    sys.stderr.flush()


def _type_name(e: BaseException) -> str:
    """``specpack.BuildError`` for specpack's classes, the bare class name for others."""
    name = f"{type(e).__module__}.{type(e).__qualname__}"
    public = public_names(name)
    return public if public != name else type(e).__name__


#: Where a worker's traceback starts inside a message (shown with ``--debug`` only).
_TRACEBACK = "\nTraceback (most recent call last):"


def _message(e: SpecPackError | OSError) -> tuple[str, str]:
    """The error's message as the command line says it (its CLI fix, when it has one), on one
    line, escaped for the terminal, and the worker's traceback the message held (for
    ``--debug``). An untrusted file's refusal keeps its list of payloads (built escaped, one
    item a line)."""
    if isinstance(e, SpecPackError):
        text = e.for_surface("cli")
    elif e.filename is not None and e.strerror:
        text = f"{e.filename}: {e.strerror}"
    else:
        text = str(e)
    text, cut, worker = public_names(text.strip()).partition(_TRACEBACK)
    text = text.strip() or type(e).__name__
    worker = (cut + worker).strip("\n")
    if not isinstance(e, UntrustedPackError):
        return one_line_text(text), worker
    lines = [line for line in text.splitlines() if line.strip()] or [type(e).__name__]
    return "\n".join([one_line_text(lines[0])]
                     + [printable(line.rstrip(), limit=4000) for line in lines[1:]]), worker


def _one_line(e: BaseException) -> str:
    """The error's message on one line, escaped for the terminal."""
    return one_line_text(public_names(str(e)) or type(e).__name__)
