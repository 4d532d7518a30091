"""``specpack``'s entry point: parse, run one command, turn errors into a message and an exit code.

An error is ONE escaped ``specpack: error: ...`` line naming the culprit and the command line's
fix (only an untrusted file's refusal lists its payloads, one a line); ``--debug`` prints the
traceback first, specpack's classes under their public names. A warning is one line too.
"""

from __future__ import annotations

import argparse
import contextlib
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

#: Each subcommand is run by ``command(ns)`` of the module of its name in this package (but
#: ``inspect``: :mod:`.describe`), imported on use so ``specpack --help`` stays fast.
_MODULES = {"inspect": "describe"}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``specpack`` command line on ``argv`` (default: ``sys.argv[1:]``) and return its
    exit code: 0 ok, 1 not identical / not portable, 2 bad input or a failed build, 130
    interrupted."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        ns = parse(args)
    except SystemExit as e:  # --help, --version, or a usage error already printed
        return e.code if isinstance(e.code, int) else EXIT_BAD_INPUT
    debug = bool(getattr(ns, "debug", False))
    module = importlib.import_module(f".{_MODULES.get(ns.command, ns.command)}", __package__)
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
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")
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
    """``--debug``'s traceback of ``e`` (and a worker's) on stderr, each line escaped,
    specpack's classes under their public names."""
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
    """The error's message as the command line says it, on one escaped line (an untrusted
    file's refusal keeps its payload lines), and the worker's traceback it held."""
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
