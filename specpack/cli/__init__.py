"""The ``specpack`` command line: capture, inspect, verify, run, demo and audit packs.

``specpack capture CartPole-v1 -o cartpole.pack`` writes a pack file; ``specpack inspect`` shows
what it holds without executing any of its code; ``specpack verify`` rebuilds it in a fresh
interpreter and compares; ``specpack run`` plays a seeded rollout; ``specpack demo`` shows the
registry problem specpack solves; ``specpack audit`` checks a whole registry (see
:func:`specpack.audit`).

Exit codes: 0 ok, 1 not identical (``verify``; ``audit``: not portable), 2 bad input or a failed
build. Errors are printed as one line naming the culprit; ``--debug`` adds the traceback.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import importlib
import importlib.util
import json
import os
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import (
    CaptureError,
    PackFormatError,
    SignatureError,
    SpecPackError,
    UntrustedPackError,
)

if TYPE_CHECKING:
    from ..pack import SpecPack

__all__ = ["EXIT_BAD_INPUT", "EXIT_NOT_IDENTICAL", "EXIT_OK", "main"]

EXIT_OK = 0
EXIT_NOT_IDENTICAL = 1
EXIT_BAD_INPUT = 2

_PROG = "specpack"
_WHERE = ("subprocess", "spawn", "forkserver")


class _Formatter(argparse.HelpFormatter):
    """Wrap descriptions as usual, but keep the epilog's examples as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class _Parser(argparse.ArgumentParser):
    """argparse with specpack's one-line error format (exit code 2, as argparse does)."""

    def error(self, message: str) -> Any:  # argparse's signature returns NoReturn
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# -- argument parsing -------------------------------------------------------------------------


def _common() -> _Parser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS,
        help="on an error, print the full traceback as well",
    )
    return common


def _loading(p: argparse.ArgumentParser) -> None:
    """Options of the commands that load and build a pack file."""
    p.add_argument("file", metavar="FILE", help="a pack file written by 'specpack capture'")
    p.add_argument(
        "--trust", action="store_true",
        help="accept code carried by value in the file (it runs when the env is built); "
        "only for files you trust",
    )
    p.add_argument(
        "--key-file", metavar="PATH",
        help="a file holding the HMAC key: the file must be signed with it and intact",
    )
    p.add_argument(
        "--allow", metavar="MODULE", action="extend", nargs="+",
        help="only accept entry points, wrappers and callables from these module prefixes",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``specpack`` argument parser (``audit`` only appears here: it parses its own)."""
    common = _common()
    parser = _Parser(
        prog=_PROG,
        parents=[common],
        formatter_class=_Formatter,
        description="Capture a Gymnasium/Gym environment once, rebuild it identically in any "
        "process.",
        epilog="Exit codes: 0 ok, 1 not identical / not portable, 2 bad input or failed build. "
        "Run 'specpack COMMAND --help' for a command's options.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"specpack {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser(
        "capture", parents=[common], formatter_class=_Formatter, help="capture a registered env id into a pack file",
        description="Resolve a registered env id here, exactly as gymnasium.make would, and "
        "write the pack to a file. Code a fresh interpreter could not import travels by value.",
        epilog="example:\n  specpack capture CustomAnt-v0 --import my_envs --kwarg legs=6 "
        "--max-episode-steps 200 -o ant.pack",
    )
    p.add_argument("id", metavar="ID", help="a registered env id, e.g. CartPole-v1 or "
                   "'my_pkg.envs:Thing-v2'")
    p.add_argument(
        "--import", dest="imports", metavar="MODULE", action="extend", nargs="+", default=[],
        help="import these modules first (they register the env); a path ending in .py is "
        "loaded from that file",
    )
    p.add_argument(
        "--kwarg", dest="kwargs", metavar="KEY=JSON", action="append", default=[],
        help="an env constructor kwarg, the value as JSON (strings quoted: title='\"x\"'); "
        "typed-manifest tags such as {\"$tuple\": [1, 2]} are understood",
    )
    p.add_argument("--max-episode-steps", type=int, metavar="N",
                   help="as gymnasium.make(max_episode_steps=N); -1 for no TimeLimit")
    p.add_argument("--disable-env-checker", action="store_true", default=None,
                   help="as gymnasium.make(disable_env_checker=True)")
    p.add_argument("--backend", choices=("gymnasium", "gym"), default=None,
                   help="the registry to resolve the id in (default: gymnasium)")
    carry = p.add_mutually_exclusive_group()
    carry.add_argument("--by-value", dest="by_value", action="store_const", const=True,
                       help="carry the env's code by value even if it is importable")
    carry.add_argument("--by-reference", dest="by_value", action="store_const", const=False,
                       help="carry the env's code by reference (module:qualname) only")
    p.add_argument("--key-file", metavar="PATH",
                   help="sign the file with the HMAC key held in PATH (the file's bytes, "
                   "surrounding whitespace removed)")
    p.add_argument("-o", "--output", metavar="FILE", required=True, help="the pack file to write")
    p.set_defaults(handler=cmd_capture)

    p = sub.add_parser(
        "inspect", parents=[common], formatter_class=_Formatter, help="show what a pack file holds, without running it",
        description="Show a pack file's id, entry point (by reference, or by value with its size "
        "and digest), kwargs, wrapper layers from the outermost in, versions and signature "
        "status. Nothing from the file is imported or unpickled.",
    )
    p.add_argument("file", metavar="FILE", help="a pack file")
    p.add_argument("--json", action="store_true",
                   help="print the file's description (manifest included) as JSON")
    p.add_argument("--key-file", metavar="PATH",
                   help="also check the file's signature against the HMAC key in PATH")
    p.set_defaults(handler=cmd_inspect)

    p = sub.add_parser(
        "verify", parents=[common], formatter_class=_Formatter, help="rebuild a pack in a fresh process and compare",
        description="Build the env here and again in a fresh interpreter (or a spawn/forkserver "
        "child), then compare spaces, wrapper layers, render_mode, spec fields and a seeded "
        "rollout. Exit code 1 if they differ.",
    )
    _loading(p)
    p.add_argument("--steps", type=int, default=100, metavar="N",
                   help="rollout steps to compare (default 100)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="rollout seed (default 0)")
    p.add_argument("--where", choices=_WHERE, default="subprocess",
                   help="where to rebuild (default: a fresh interpreter)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="give up on the rebuild after this long (default 120)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=cmd_verify)

    p = sub.add_parser(
        "run", parents=[common], formatter_class=_Formatter, help="build a pack's env and run a seeded rollout",
        description="Build the env from a pack file, run a seeded rollout with random actions "
        "(auto-reset at episode ends) and print episodes, returns and steps per second.",
    )
    _loading(p)
    p.add_argument("--steps", type=int, default=1000, metavar="N",
                   help="steps to run (default 1000)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="rollout seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser(
        "demo", parents=[common], formatter_class=_Formatter, help="show the registry problem and the rescue",
        description="Register a custom env inside a script's main guard, then try "
        "gymnasium.make(id) and pack.make() in fork, spawn and forkserver children, a fresh "
        "interpreter and (when installed) a Ray worker.",
    )
    p.add_argument("--no-ray", dest="ray", action="store_false", default=None,
                   help="leave out the Ray worker even if Ray is installed")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(handler=cmd_demo)

    sub.add_parser(
        "audit", add_help=False,
        help="find envs and wrappers that do not survive a process boundary "
        "(see 'specpack audit --help')",
    )
    return parser


# -- entry point ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 not identical, 2 bad input)."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = _first_command(args)
    if command is not None and args[command] == "audit":
        debug = "--debug" in args[:command]
        return _guard(lambda: _audit(args[command + 1:]), debug)
    parser = build_parser()
    ns = parser.parse_args(args)
    debug = bool(getattr(ns, "debug", False))
    handler: Callable[[argparse.Namespace], int] = ns.handler
    previous = warnings.formatwarning
    warnings.formatwarning = _format_warning
    try:
        return _guard(lambda: handler(ns), debug)
    finally:
        warnings.formatwarning = previous


def _format_warning(message: Warning | str, category: type[Warning], filename: str,
                    lineno: int, line: str | None = None) -> str:
    """Warnings (e.g. ``VersionSkewWarning``) as one line, like errors."""
    text = " ".join(str(message).split())
    return f"{_PROG}: warning: {category.__name__}: {text}\n"


def _first_command(args: list[str]) -> int | None:
    """Index of the first positional argument (the command), skipping global options."""
    for i, a in enumerate(args):
        if a == "--":
            return i + 1 if i + 1 < len(args) else None
        if not a.startswith("-"):
            return i
    return None


def _audit(argv: list[str]) -> int:
    from .._audit import audit_main

    return int(audit_main(argv))


def _guard(run: Callable[[], int], debug: bool) -> int:
    """Run a command; turn errors into one line on stderr and an exit code."""
    try:
        return run()
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130
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
        print(f"{_PROG}: error: {_one_line(e)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as e:  # noqa: BLE001 - the CLI promises one line, no traceback
        if debug:
            traceback.print_exc()
        hint = "" if debug else " (run again with --debug for the traceback)"
        print(f"{_PROG}: error: unexpected {type(e).__name__}: {_one_line(e)}{hint}",
              file=sys.stderr)
        return EXIT_BAD_INPUT


def _one_line(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}"
    text = str(e).strip() or type(e).__name__
    if isinstance(e, UntrustedPackError):
        text += " [command line: add --trust, or --key-file PATH for a signed file]"
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


# -- capture ----------------------------------------------------------------------------------


def cmd_capture(ns: argparse.Namespace) -> int:
    """``specpack capture``: resolve an id here and write the pack file."""
    from .._capture import capture
    from ..files import dump

    for name in ns.imports:
        _import(name)
    kwargs = dict(_parse_kwarg(item) for item in ns.kwargs)
    key = _read_key(ns.key_file) if ns.key_file else None
    pack = capture(
        ns.id,
        max_episode_steps=ns.max_episode_steps,
        disable_env_checker=ns.disable_env_checker,
        backend=ns.backend,
        by_value=ns.by_value,
        **kwargs,
    )
    out = Path(ns.output)
    dump(pack, out, key=key)
    size = out.stat().st_size
    signed = ", signed" if key is not None else ""
    print(f"wrote {out} ({_bytes(size)}{signed}): {pack!r}")
    print(f"fingerprint {pack.fingerprint}")
    for note in pack.notes:
        print(f"note: {note}")
    return EXIT_OK


def _import(name: str) -> None:
    """``--import``: a module by name (the working directory searched too), or a .py file."""
    path = Path(name)
    try:
        if name.endswith(".py"):
            if not path.is_file():
                raise CaptureError(f"--import {name}: no such file")
            modname = path.stem
            spec = importlib.util.spec_from_file_location(modname, path)
            if spec is None or spec.loader is None:
                raise CaptureError(f"--import {name}: cannot load this file as a module")
            module = importlib.util.module_from_spec(spec)
            sys.modules[modname] = module
            spec.loader.exec_module(module)
            return
        cwd = os.getcwd()
        if cwd not in sys.path and "" not in sys.path:
            sys.path.insert(0, cwd)
        importlib.import_module(name)
    except SpecPackError:
        raise
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        raise CaptureError(
            f"--import {name} failed ({type(e).__name__}: {e}); check the module name and that "
            "it is installed (or in the working directory)"
        ) from e


def _parse_kwarg(item: str) -> tuple[str, Any]:
    """``KEY=JSON`` -> ``(key, value)``; typed tags (``$tuple``, ``$ndarray``...) decoded."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise CaptureError(
            f"--kwarg {item!r} is not of the form KEY=JSON (e.g. --kwarg gravity=9.8, "
            "--kwarg title='\"text\"')"
        )
    try:
        node = json.loads(raw)
    except ValueError:
        raise CaptureError(
            f"--kwarg {key}: {raw!r} is not JSON; quote strings (--kwarg {key}='\"{raw}\"'), "
            "write booleans as true/false and None as null"
        ) from None
    from ..carry.values import materialize
    from ..typedjson.decode import Decoder

    try:
        value = Decoder({}, f"--kwarg {key}").value(node, key)
        return key, materialize(value)
    except PackFormatError as e:
        raise CaptureError(str(e)) from None


def _read_key(path: str) -> bytes:
    from ..files import read_key

    return read_key(path)


def _bytes(n: int) -> str:
    if n < 10_000:
        return f"{n:,} bytes"
    if n < 10_000_000:
        return f"{n / 1000:.1f} kB"
    return f"{n / 1e6:.1f} MB"


# -- loading a pack file ----------------------------------------------------------------------


def _check_file(path: str) -> None:
    p = Path(path)
    if not p.exists():
        raise PackFormatError(f"{path}: no such file")
    if p.is_dir():
        raise PackFormatError(f"{path}: is a directory, not a pack file")


def _load(ns: argparse.Namespace) -> SpecPack:
    from ..files import load

    _check_file(ns.file)
    key = _read_key(ns.key_file) if ns.key_file else None
    pack: SpecPack = load(ns.file, trust=bool(ns.trust), key=key, allow=ns.allow)
    return pack


# -- inspect ----------------------------------------------------------------------------------


def cmd_inspect(ns: argparse.Namespace) -> int:
    """``specpack inspect``: describe a file; nothing in it is imported or unpickled."""
    from ..files import describe

    _check_file(ns.file)
    key = _read_key(ns.key_file) if ns.key_file else None
    desc = describe(ns.file, key=key)
    if ns.json:
        print(json.dumps(desc, indent=2, default=str, ensure_ascii=False))
    else:
        # A hostile file's strings must not reach the terminal as escape sequences.
        from .._text import printable

        print("\n".join(printable(line, limit=10_000)
                         for line in render_description(ns.file, desc).splitlines()))
    sig = desc.get("signature") if isinstance(desc, dict) else None
    status = sig.get("status") if isinstance(sig, dict) else None
    if key is not None and status != "valid":
        detail = sig.get("detail") if isinstance(sig, dict) else None
        raise SignatureError(
            f"{ns.file}: the signature check with --key-file {ns.key_file} failed: "
            f"{status}{f' ({detail})' if detail else ''}"
        )
    return EXIT_OK


def _manifest_of(desc: Any) -> dict[str, Any]:
    if isinstance(desc, dict):
        m = desc.get("manifest")
        if isinstance(m, dict):
            return m
        if "format" in desc and "entry_point" in desc:
            return desc
    raise PackFormatError("the file's description holds no manifest")


def render_description(path: str, desc: dict[str, Any]) -> str:
    """The readable table ``specpack inspect`` prints for ``files.describe(path)``."""
    m = _manifest_of(desc)
    raw_payloads = m.get("payloads")
    payloads: dict[str, Any] = raw_payloads if isinstance(raw_payloads, dict) else {}
    r = _Renderer(payloads)
    rows: list[tuple[str, str]] = [
        ("file", f"{path} ({_bytes(Path(path).stat().st_size)})"),
        ("format", str(m.get("format"))),
        ("id", str(m.get("id"))),
        ("backend", str(m.get("backend"))),
        ("entry point", r.code(m.get("entry_point"))),
    ]
    kwargs = m.get("kwargs")
    if isinstance(kwargs, dict) and kwargs:
        rows += [(("kwargs" if i == 0 else ""), f"{k} = {r.value(v)}")
                 for i, (k, v) in enumerate(r.items(kwargs))]
    else:
        rows.append(("kwargs", "(none)"))
    layers = m.get("layers") if isinstance(m.get("layers"), list) else []
    if layers:
        for i, layer in enumerate(layers):
            if not isinstance(layer, dict):
                continue
            lk = layer.get("kwargs")
            args = ", ".join(f"{k}={r.value(v)}" for k, v in r.items(lk)) if isinstance(
                lk, dict) else ""
            name, origin = r.code_parts(layer.get("class"))
            rows.append(("layers" if i == 0 else "", f"{i + 1}. {name}({args})  [{origin}]"))
        rows.append(("", f"   base env: the entry point ({_short_name(m.get('entry_point'))})"))
    else:
        rows.append(("layers", "(none: the bare env)"))
    if m.get("render_wrappers") == "make":
        rows.append(("render", "HumanRendering/RenderCollection added at build time by "
                               "render_mode, as gymnasium.make does"))
    spec = m.get("spec")
    if isinstance(spec, dict) and spec:
        rows.append(("spec", ", ".join(f"{k}={r.value(v)}" for k, v in r.items(spec))))
    versions = m.get("versions")
    if isinstance(versions, dict):
        rows.append(("versions", ", ".join(f"{k} {v}" for k, v in versions.items())))
    fp = desc.get("fingerprint")
    if isinstance(fp, dict) and fp.get("recorded") is not None:
        if fp.get("matches", True):
            rows.append(("fingerprint", str(fp.get("recorded"))))
        else:
            rows.append(("fingerprint", f"{fp.get('computed')} (the file records "
                                        f"{fp.get('recorded')}: the manifest was edited)"))
    elif m.get("fingerprint"):
        rows.append(("fingerprint", str(m.get("fingerprint"))))
    code = [(d, p) for d, p in payloads.items() if isinstance(p, dict)]
    if code:
        for i, (digest, p) in enumerate(code):
            rows.append((
                "payloads" if i == 0 else "",
                f"{p.get('kind')} {p.get('name')}: {_bytes(_int(p.get('size')))}, {digest}, "
                f"{p.get('format', 'cloudpickle')} for Python {p.get('python')} "
                f"({p.get('note', 'unpickled when loaded')})",
            ))
    else:
        rows.append(("payloads", "none: no code travels by value; loads without --trust"))
    rows.append(("signature", _signature(desc)))
    if code:
        rows.append(("trust", "loading it needs trust=True (--trust) or a valid signature key "
                              "(--key-file): the payloads run code when the env is built"))
    notes = m.get("notes")
    if isinstance(notes, list):
        rows += [("notes" if i == 0 else "", str(n)) for i, n in enumerate(notes)]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}".rstrip() for k, v in rows)


def _int(x: Any) -> int:
    return x if isinstance(x, int) and not isinstance(x, bool) else 0


def _signature(desc: dict[str, Any]) -> str:
    sig = desc.get("signature", desc.get("signature_status"))
    if sig is None:
        return "unknown"
    if isinstance(sig, dict):
        status = sig.get("status")
        rest = ", ".join(f"{k}: {v}" for k, v in sig.items() if k != "status")
        if status is not None:
            return f"{status}" + (f" ({rest})" if rest else "")
        return rest or "unknown"
    return str(sig)


def _short_name(node: Any) -> str:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            return str(node["$ref"]).rpartition(":")[2]
        if "$code" in node:
            return "carried by value"
    return "?"


class _Renderer:
    """Typed-manifest JSON -> Python-like text, without importing or unpickling anything."""

    LIMIT = 200

    def __init__(self, payloads: dict[str, Any]) -> None:
        self.payloads = payloads

    def items(self, d: dict[str, Any]) -> list[tuple[str, Any]]:
        if set(d) == {"$dict"} and isinstance(d["$dict"], list):
            return [(self.value(p[0]), p[1]) for p in d["$dict"]
                    if isinstance(p, list) and len(p) == 2]
        return [(str(k), v) for k, v in d.items()]

    def code(self, node: Any) -> str:
        """An entry point: its full name and how it travels."""
        name, origin = self.code_parts(node, full=True)
        return f"{name}  [{origin}]"

    def code_parts(self, node: Any, full: bool = False) -> tuple[str, str]:
        """``(name, how it travels)`` of a ``$ref``/``$code`` node."""
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            mod, _, qual = str(node["$ref"]).rpartition(":")
            return (node["$ref"], "by reference") if full else (qual, f"{mod}, by reference")
        if isinstance(node, dict) and isinstance(node.get("$code"), str):
            digest = node["$code"]
            p = self.payloads.get(digest)
            if isinstance(p, dict):
                name = str(p.get("name"))
                if not full:
                    name = name.rpartition(":")[2]
                return name, (f"by value: {_bytes(_int(p.get('size')))} of cloudpickle for "
                              f"Python {p.get('python')}, {digest}")
            return "?", f"by value: {digest}, payload missing from the file"
        return self.value(node), "?"

    def value(self, node: Any) -> str:
        text = self._value(node, 0)
        return text if len(text) <= self.LIMIT else text[: self.LIMIT - 3] + "..."

    def _value(self, node: Any, depth: int) -> str:
        if depth > 20:
            return "..."
        d = depth + 1
        if node is None or isinstance(node, (bool, int, float, str)):
            return repr(node)
        if isinstance(node, list):
            return "[" + ", ".join(self._value(v, d) for v in node) + "]"
        if not isinstance(node, dict):
            return repr(node)
        tags = [k for k in node if isinstance(k, str) and k.startswith("$")]
        if not tags:
            return "{" + ", ".join(f"{k!r}: {self._value(v, d)}" for k, v in node.items()) + "}"
        tag, body = tags[0], node[tags[0]]
        if tag in ("$int", "$float"):
            return str(body)
        if tag == "$bytes":
            try:
                raw = base64.b64decode(str(body).encode("ascii"), validate=True)
            except (binascii.Error, ValueError, UnicodeEncodeError):
                return "<bytes: invalid base64>"
            return repr(raw) if len(raw) <= 40 else f"<{len(raw)} bytes>"
        if tag == "$complex" and isinstance(body, list) and len(body) == 2:
            return f"complex({self._value(body[0], d)}, {self._value(body[1], d)})"
        if tag == "$tuple" and isinstance(body, list):
            inner = ", ".join(self._value(v, d) for v in body)
            return f"({inner},)" if len(body) == 1 else f"({inner})"
        if tag in ("$set", "$frozenset") and isinstance(body, list):
            inner = ", ".join(self._value(v, d) for v in body)
            if tag == "$set":
                return "{" + inner + "}" if body else "set()"
            return f"frozenset({{{inner}}})" if body else "frozenset()"
        if tag == "$dict" and isinstance(body, list):
            return "{" + ", ".join(
                f"{self._value(p[0], d)}: {self._value(p[1], d)}" for p in body
                if isinstance(p, list) and len(p) == 2
            ) + "}"
        if tag in ("$ndarray", "$npscalar") and isinstance(body, dict):
            dtype = body.get("dtype")
            if tag == "$npscalar":
                return f"numpy {dtype} scalar {self._value(body.get('value', '?'), d)}"
            shape = tuple(body.get("shape") or ())
            values = body.get("values")
            shown = ""
            if isinstance(values, list):
                head = ", ".join(self._value(v, d) for v in values[:6])
                shown = f", [{head}{', ...' if len(values) > 6 else ''}]"
            return f"array(dtype {dtype}, shape {shape}{shown})"
        if tag == "$enum":
            return f"{body}.{node.get('name')}"
        if tag == "$ref":
            return f"<{body}>"
        if tag in ("$code", "$object"):
            p = self.payloads.get(body) if isinstance(body, str) else None
            kind = "code" if tag == "$code" else "object"
            if isinstance(p, dict):
                return f"<{kind} {p.get('name')} by value, {_bytes(_int(p.get('size')))}>"
            return f"<{kind} by value {body}>"
        return json.dumps(node, default=str)


# -- verify -----------------------------------------------------------------------------------


def cmd_verify(ns: argparse.Namespace) -> int:
    """``specpack verify``: rebuild in a fresh process, compare, exit 1 if they differ."""
    if ns.steps < 0:
        raise SpecPackError(f"--steps {ns.steps}: must be 0 or more")
    pack = _load(ns)
    where = "a fresh interpreter" if ns.where == "subprocess" else f"a {ns.where} child"
    with _progress(f"verifying {pack.label} in {where} ({ns.steps} steps, seed {ns.seed})"):
        report = pack.verify(steps=ns.steps, seed=ns.seed, where=ns.where, timeout=ns.timeout)
    if ns.json:
        print(json.dumps({
            "file": ns.file,
            "id": pack.id,
            "identical": bool(report),
            "differences": list(report.differences),
            "where": ns.where,
            "steps": ns.steps,
            "seed": ns.seed,
            "rollout_compared": bool(getattr(report, "rollout_compared", True)),
            "elapsed": round(float(getattr(report, "elapsed", 0.0)), 4),
            "notes": list(getattr(report, "notes", [])),
        }, indent=2))
        return EXIT_OK if report else EXIT_NOT_IDENTICAL
    elapsed = float(getattr(report, "elapsed", 0.0))
    compared = "layers, spaces, render_mode, spec"
    if getattr(report, "rollout_compared", True):
        compared += f", {ns.steps}-step rollout with seed {ns.seed}"
    if report:
        print(f"identical: {pack.label} rebuilt in {where} matches the build here "
              f"({compared}; {elapsed:.2f} s)")
    else:
        n = len(report.differences)
        print(f"NOT identical: {pack.label} rebuilt in {where} differs from the build here "
              f"({n} difference{'s' if n != 1 else ''}; {elapsed:.2f} s):")
        for d in report.differences:
            first, *rest = str(d).splitlines() or [""]
            print(f"  - {first}")
            for line in rest:
                print(f"    {line}")
    for note in getattr(report, "notes", []):
        print(f"note: {note}")
    return EXIT_OK if report else EXIT_NOT_IDENTICAL


@contextmanager
def _progress(message: str, stream: IO[str] | None = None) -> Iterator[None]:
    """A spinner with the elapsed time on a terminal (nothing when redirected)."""
    out = stream if stream is not None else sys.stderr
    if not (hasattr(out, "isatty") and out.isatty()):
        yield
        return
    done = threading.Event()
    start = time.perf_counter()

    def spin() -> None:
        frames = "|/-\\"
        i = 0
        while not done.wait(0.1):
            out.write(f"\r{message} {frames[i % 4]} {time.perf_counter() - start:.1f} s")
            out.flush()
            i += 1

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        out.write("\r" + " " * (len(message) + 12) + "\r")
        out.flush()


# -- run --------------------------------------------------------------------------------------


def cmd_run(ns: argparse.Namespace) -> int:
    """``specpack run``: build the env, run a seeded rollout, print the figures."""
    if ns.steps < 1:
        raise SpecPackError(f"--steps {ns.steps}: must be 1 or more")
    pack = _load(ns)
    build_start = time.perf_counter()
    env = pack.make()
    build = time.perf_counter() - build_start
    try:
        figures = rollout(env, ns.steps, ns.seed)
    finally:
        try:
            env.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
    figures = {"file": ns.file, "id": pack.id, "build_seconds": round(build, 6), **figures}
    if ns.json:
        print(json.dumps(figures, indent=2))
        return EXIT_OK
    returns: list[float] = figures["returns"]
    print(f"{pack.label}: built in {build * 1000:.1f} ms; {figures['steps']} steps in "
          f"{figures['seconds']:.3f} s ({figures['steps_per_second']:,.0f} steps/s), seed "
          f"{ns.seed}")
    if returns:
        mean = sum(returns) / len(returns)
        print(f"episodes: {len(returns)} finished, return mean {mean:.3f} "
              f"(min {min(returns):.3f}, max {max(returns):.3f}); mean length "
              f"{figures['mean_episode_length']:.1f} steps")
    else:
        print("episodes: none finished")
    if figures["open_episode_steps"]:
        print(f"          plus one in progress ({figures['open_episode_steps']} steps, return "
              f"{figures['open_episode_return']:.3f} so far)")
    return EXIT_OK


def rollout(env: Any, steps: int, seed: int) -> dict[str, Any]:
    """A seeded rollout with random actions and auto-reset; episodes, returns, speed."""
    env.reset(seed=seed)
    env.action_space.seed(seed)
    returns: list[float] = []
    lengths: list[int] = []
    ret, length = 0.0, 0
    start = time.perf_counter()
    for _ in range(steps):
        _obs, reward, terminated, truncated, _info = env.step(env.action_space.sample())
        ret += float(reward)
        length += 1
        if terminated or truncated:
            returns.append(ret)
            lengths.append(length)
            ret, length = 0.0, 0
            env.reset()
    seconds = time.perf_counter() - start
    return {
        "steps": steps,
        "seconds": round(seconds, 6),
        "steps_per_second": round(steps / seconds, 1) if seconds > 0 else None,
        "seed": seed,
        "episodes": len(returns),
        "returns": returns,
        "mean_episode_length": sum(lengths) / len(lengths) if lengths else None,
        "open_episode_steps": length,
        "open_episode_return": ret,
    }


# -- demo -------------------------------------------------------------------------------------


def cmd_demo(ns: argparse.Namespace) -> int:
    """``specpack demo``: the registry problem across start methods, and the rescue."""
    from ..demo import render, run_demo

    result = run_demo(ray=ns.ray)
    if ns.json:
        print(json.dumps(result, indent=2))
    else:
        print(render(result))
    return EXIT_OK if result["pack_ok_everywhere"] else EXIT_NOT_IDENTICAL
