"""``specpack``'s entry point: parse, run one command, turn errors into one line and an exit code.

Exit codes: 0 ok, 1 not identical (``verify``, ``check``) or not portable (``audit``), 2 bad input or a
failed build, 130 interrupted. An error is one ``specpack: error: ...`` line on stderr naming
the culprit; ``--debug`` (anywhere on the line) prints the traceback first. Warnings (e.g.
``VersionSkewWarning``) are one ``specpack: warning: ...`` line each.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence

from .._text import printable
from ..errors import SpecPackError, UntrustedPackError
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
        print(f"{PROG}: error: {_one_line(e)}{hint}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as e:  # noqa: BLE001 - the CLI promises one line, no traceback
        if debug:
            traceback.print_exc()
        hint = "" if debug else " (run again with --debug for the traceback)"
        print(f"{PROG}: error: unexpected {type(e).__name__}: {_one_line(e)}{hint}",
              file=sys.stderr)
        return EXIT_BAD_INPUT


def _one_line(e: BaseException) -> str:
    """The error's message on one line, escaped for the terminal."""
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        text = f"{e.filename}: {e.strerror}"
    else:
        text = str(e).strip() or type(e).__name__
    if isinstance(e, UntrustedPackError):
        text += " [command line: add --trust, or --key-file PATH for a signed file]"
    return printable(" ".join(text.split()), limit=4000)
