"""``specpack``'s entry point: parse, run one command, turn errors into a message and an exit code.

Exit codes: 0 ok, 1 not identical (``verify``, ``check``) or not portable (``audit``), 2 bad
input or a failed build, 130 interrupted. An error is a ``specpack: error: ...`` line on stderr
naming the culprit and the fix as the command line applies it (a :class:`SpecPackError`'s
``cli`` fix: its flags, not Python's arguments), followed by the message's further lines when
it has some (a list, one item a line); ``--debug`` (anywhere on the line) prints the traceback
first. Warnings (e.g. ``VersionSkewWarning``) are one ``specpack: warning: ...`` line each.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence

from .._errors import SpecPackError
from .._text import printable
from .output import EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_OK, PROG
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
    text = printable(" ".join(str(message).split()), limit=2000)
    return f"{PROG}: warning: {category.__name__}: {text}\n"


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
        if debug:
            traceback.print_exc()
        hint = ""
        cause = e.__cause__
        if not debug and cause is not None and not isinstance(cause, SpecPackError):
            hint = " (run again with --debug for the traceback)"
        print(f"{PROG}: error: {_message(e)}{hint}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as e:  # noqa: BLE001 - the CLI promises one line, no traceback
        if debug:
            traceback.print_exc()
        hint = "" if debug else " (run again with --debug for the traceback)"
        print(f"{PROG}: error: unexpected {type(e).__name__}: {_one_line(e)}{hint}",
              file=sys.stderr)
        return EXIT_BAD_INPUT


def _message(e: SpecPackError | OSError) -> str:
    """The error's message as the command line says it (its CLI fix, when it has one),
    escaped for the terminal: each of its lines kept (a list stays one item a line)."""
    if isinstance(e, SpecPackError):
        text = e.for_surface("cli")
    elif e.filename is not None and e.strerror:
        text = f"{e.filename}: {e.strerror}"
    else:
        text = str(e)
    lines = [line for line in text.strip().splitlines() if line.strip()] or [type(e).__name__]
    first = printable(" ".join(lines[0].split()), limit=4000)
    return "\n".join([first] + [printable(line.rstrip(), limit=4000) for line in lines[1:]])


def _one_line(e: BaseException) -> str:
    """The error's message on one line, escaped for the terminal."""
    return printable(" ".join((str(e).strip() or type(e).__name__).split()), limit=4000)
