"""``specpack``'s entry point: parse, run one command, turn errors into a message and an exit code.

An error or a warning is ONE escaped line (an untrusted file's refusal also lists its payloads);
``--debug`` prints the traceback first, specpack's classes under their public names.
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
    """Run the ``specpack`` command line on ``argv`` (default: ``sys.argv[1:]``); return its exit
    code: 0 ok, 1 not identical / not portable, 2 bad input or a failed build, 130 interrupted."""
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
    hint = "" if debug else " (run again with --debug for the traceback)"
    try:
        return handler(ns)
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
        cause = e.__cause__
        traced = ((cause is not None and not isinstance(cause, SpecPackError))
                  or getattr(e, "child_traceback", None) or worker)
        print(f"{PROG}: error: {message}{hint if traced else ''}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as e:  # noqa: BLE001 - the CLI promises one line, no traceback
        if debug:
            print_traceback(e)
        text = one_line_text(public_names(str(e)) or type(e).__name__)
        full = f"{type(e).__module__}.{type(e).__qualname__}"
        public = public_names(full)  # specpack.BuildError; another class by its bare name
        name = public if public != full else type(e).__name__
        print(f"{PROG}: error: unexpected {name}: {text}{hint}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        warnings.formatwarning = previous


def _format_warning(message: Warning | str, category: type[Warning], filename: str,
                    lineno: int, line: str | None = None) -> str:
    """A warning as one line, like errors."""
    return f"{PROG}: warning: {category.__name__}: {one_line_text(str(message), 2000)}\n"


def print_traceback(e: BaseException, worker: str = "") -> None:
    """``--debug``'s traceback of ``e`` (and a worker's) on stderr, escaped, public names."""
    text = format_exception(e)
    child = getattr(e, "child_traceback", "")
    for tail in (child if isinstance(child, str) else "", worker):
        if tail.strip():
            text += "The traceback in the worker:\n" + tail.strip("\n") + "\n"
    for line in public_names(text).splitlines():
        print(printable(line, limit=4000), file=sys.stderr)
    sys.stderr.flush()


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
