"""The ``specpack`` argument parsers: a usage error is one line (exit code 2) with a
did-you-mean, and no option may be abbreviated (``--max-episode-step`` is a typo, not
``--max-episode-steps``)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any

from ..._core._backends import DEFAULT_BACKEND, with_trait
from ..._core._process.launch import BOUNDARIES
from ..._core._text import printable, suggest
from ..._core._version import __version__
from .._audit.options import DEFAULT_TIMEOUT, REFERENCES
from .output import EXIT_BAD_INPUT, PROG

__all__ = ["COMMANDS", "build_parser", "parse"]

COMMANDS = ("capture", "inspect", "verify", "check", "run", "demo", "audit")

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
#: The options that take one value each and may be repeated (before 0.3 each took a list).
_REPEATED = ("--import", "--allow")


class _Formatter(argparse.HelpFormatter):
    """Wrap descriptions as usual, but keep an epilog's examples as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class CliParser(argparse.ArgumentParser):
    """argparse with one-line errors that suggest what was meant, and no abbreviations."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> Any:  # argparse's signature returns NoReturn
        """Print ``prog: error: message`` and exit with code 2."""
        text = printable(message, limit=2000)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {text} (see {self.prog} --help)\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # argparse's hook for ``choices``: the same check, with a did-you-mean.
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(c) for c in choices]
        hint = _hint(suggest(str(value), names))
        listed = ", ".join(names)
        if action.dest == "command":
            raise argparse.ArgumentError(None, f"unknown command {value!r}{hint} (commands: "
                                         f"{listed})")
        raise argparse.ArgumentError(action, f"invalid choice: {value!r}{hint} (choose from "
                                     f"{listed})")


def _hint(suggestion: str) -> str:
    return f";{suggestion}" if suggestion else ""


def _check_option(parser: argparse.ArgumentParser, token: str) -> None:
    """Stop at an option ``parser`` does not know, suggesting the closest one."""
    # argparse keeps a parser's option strings (parents and groups included) in this map.
    options = list(parser._option_string_actions)
    name = token.split("=", 1)[0] if token.startswith("--") else token
    if name in options:
        return
    if not token.startswith("--") and len(token) > 2 and token[:2] in options:
        return  # -oFILE
    hint = _hint(suggest(name, [o for o in options if o.startswith("--")] or options))
    parser.error(f"unknown option {name}{hint}")


def _is_option(token: str) -> bool:
    return token.startswith("-") and token != "-" and not _NEGATIVE_NUMBER.match(token)


def _check_tokens(parser: argparse.ArgumentParser, commands: dict[str, argparse.ArgumentParser],
                  args: Sequence[str]) -> None:
    """Refuse unknown options before argparse would (it reports a missing required option or
    argument first, which hides the typo that caused it)."""
    current = parser
    for token in args:
        if token == "--":
            return
        if _is_option(token):
            _check_option(current, token)
        elif current is parser:  # the command: its own options follow
            sub = commands.get(token)
            if sub is None:
                return  # argparse reports the unknown command, with a suggestion
            current = sub


def parse(args: Sequence[str]) -> argparse.Namespace:
    """Parse a ``specpack`` command line (exits with code 2 on a usage error, 0 on --help)."""
    parser, commands = _build()
    argv = list(args)
    _check_tokens(parser, commands, argv)
    if (old := _list_form(argv)) is not None:
        parser.error(old)
    ns, extra = parser.parse_known_args(argv)
    if extra:
        hint = _list_form(argv, strict=False)
        parser.error(f"unrecognized arguments: {' '.join(extra)}" + (f"; {hint}" if hint else ""))
    ns.argv = tuple(argv)  # the order of the tokens (the audit reads --import's neighbour)
    return ns


def _list_form(argv: Sequence[str], *, strict: bool = True) -> str | None:
    """How to write an option of :data:`_REPEATED` given a list (before 0.3: ``--import a b --
    ID``), or None. ``strict``: only such a list ended by ``--`` (argparse would misread it);
    else any run of two or more values."""
    for i, token in enumerate(argv):
        if token not in _REPEATED:
            continue
        values: list[str] = []
        for t in argv[i + 1:]:
            if t == "--" or _is_option(t):
                break
            values.append(t)
        after = argv[i + 1 + len(values):]
        ended = bool(after) and after[0] == "--"
        old = (ended and (len(values) > 1 or any(_is_option(t) for t in after[1:]))
               if strict else len(values) > 1)
        if old:
            shown = " ".join(f"{token} {printable(v, 80)}" for v in values[:2])
            return (f"{token} takes one value, so no -- is needed after it, and is repeated "
                    f"for more ({shown}); the ID, FILE or TARGETs may come before or after "
                    "the options")
    return None


def build_parser() -> argparse.ArgumentParser:
    """The ``specpack`` argument parser, every subcommand included."""
    return _build()[0]


def _imports(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--import", dest="imports", metavar="MODULE", action="append", default=[],
                   help=f"import this module first ({what}); a path ending in .py is loaded "
                   "from that file; the working directory is searched too. Repeat it for more "
                   "modules")


def _loading(p: argparse.ArgumentParser) -> None:
    """Options of the commands that load and build a pack file."""
    p.add_argument("file", metavar="FILE", help="a pack file written by 'specpack capture'")
    p.add_argument("--trust", action="store_true",
                   help="accept code carried by value in the file (it runs when the env is "
                   "built); only for files you trust")
    p.add_argument("--key-file", metavar="PATH",
                   help="a file holding the HMAC key (its bytes, exactly): the file must be "
                   "signed with it and intact")
    p.add_argument("--allow", metavar="MODULE", action="append",
                   help="only accept code this entry admits: a module (its env and wrapper "
                   "classes and values) or an exact module:qualname (e.g. a factory function); "
                   "repeat it for more entries")
    _imports(p, "e.g. one the file's code refers to")


def _build() -> tuple[CliParser, dict[str, argparse.ArgumentParser]]:
    common = CliParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="on an error, print the full traceback as well")
    parser = CliParser(
        prog=PROG, parents=[common], formatter_class=_Formatter,
        description="Capture a Gymnasium/Gym environment once, rebuild it identically in any "
        "process.",
        epilog="Exit codes: 0 ok, 1 not identical / not portable, 2 bad input or failed build. "
        "Run 'specpack COMMAND --help' for a command's options.",
    )

    parser.add_argument("--version", action="version", version=f"specpack {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CliParser)
    sub.required = True

    def add(name: str, help: str, description: str, epilog: str | None = None) -> Any:
        return sub.add_parser(name, parents=[common], formatter_class=_Formatter, help=help,
                              description=description, epilog=epilog)

    p = add("capture", "capture a registered env id (or an env class) into a pack file",
            "Resolve a registered env id here, exactly as gymnasium.make would, or take an env "
            "class with --entry-point (no registry needed), and write the pack to a file. Code "
            "a fresh interpreter could not import travels by value.",
            "example:\n  specpack capture CustomAnt-v0 --import my_envs --kwarg legs=6 "
            "--max-episode-steps 200 -o ant.pack\n"
            "  specpack capture CustomAnt-v0 --import my_envs --self-contained --asset "
            "assets/ --seal 100 -o ant.pack\n"
            "  specpack capture --entry-point my_envs:AntEnv --kwarg legs=6 -o ant.pack")
    p.add_argument("id", metavar="ID", nargs="?",
                   help="a registered env id, e.g. CartPole-v1 or 'my_pkg.envs:Thing-v2'")
    p.add_argument("--entry-point", metavar="MODULE:CLASS",
                   help="capture this env class (or factory) instead of a registered id, as "
                   "specpack.capture(Class, **kwargs) does; MODULE may be a path ending in .py")
    _imports(p, "e.g. the one that registers the env")
    p.add_argument("--kwarg", dest="kwargs", metavar="KEY=JSON", action="append", default=[],
                   help="an env constructor kwarg, the value as JSON (strings quoted: "
                   "title='\"x\"'); typed-manifest tags such as {\"$tuple\": [1, 2]} are "
                   "understood")
    p.add_argument("--max-episode-steps", type=int, metavar="N",
                   help="as gymnasium.make(max_episode_steps=N); -1 for no TimeLimit")
    p.add_argument("--disable-env-checker", action="store_true", default=None,
                   help="as gymnasium.make(disable_env_checker=True)")
    p.add_argument("--backend", choices=with_trait("ids"), default=None,
                   help=f"the registry to resolve the id in (default: {DEFAULT_BACKEND})")
    carry = p.add_mutually_exclusive_group()
    carry.add_argument("--by-value", dest="by_value", action="store_const", const=True,
                       help="carry the env's code by value even if it is importable")
    carry.add_argument("--by-reference", dest="by_value", action="store_const", const=False,
                       help="carry the env's code by reference (module:qualname) only; the "
                       "file then loads only where those modules import")
    p.add_argument("--asset", dest="assets", metavar="PATH", action="append", default=[],
                   help="a file or folder the env reads that no kwarg names as it is (an XML "
                   "with <include>s, meshes); recorded with its sha256 like the files the "
                   "kwargs name. Repeat it for more")
    p.add_argument("--self-contained", action="store_true",
                   help="carry the assets' bytes and your own code (modules from no installed "
                   "distribution) in the file, so it builds on a node without your project "
                   "folder, as capture(..., self_contained=True)")
    p.add_argument("--seal", type=int, metavar="STEPS", default=None,
                   help="seal the file: record a seeded STEPS-step rollout made in a fresh "
                   "interpreter, which 'specpack check FILE' compares a rebuild with anywhere "
                   "later, as specpack.seal(pack, STEPS)")
    p.add_argument("--seed", type=int, metavar="S", default=None,
                   help="the sealed rollout's seed (default 0; needs --seal)")
    p.add_argument("--key-file", metavar="PATH",
                   help="sign the file with the HMAC key held in PATH (the file's bytes, "
                   "exactly)")
    p.add_argument("-o", "--output", metavar="FILE", required=True, help="the pack file to write")

    p = add("inspect", "show what a pack file holds, without running it",
            "Show a pack file's id, entry point (by reference, or by value with its size and "
            "digest), kwargs, wrapper layers from the outermost in, versions and signature "
            "status. Nothing from the file is imported or unpickled.")
    p.add_argument("file", metavar="FILE", help="a pack file")
    p.add_argument("--json", action="store_true",
                   help="print the file's description (manifest included) as JSON (ASCII, "
                   "every other character escaped)")
    p.add_argument("--key-file", metavar="PATH",
                   help="also check the file's signature against the HMAC key in PATH")
    _imports(p, "not needed to inspect a file: nothing in it is imported")

    p = add("verify", "rebuild a pack in a fresh process and compare",
            "Build the env here and again in a fresh interpreter (or a spawn/forkserver child), "
            "then compare spaces, wrapper layers, render_mode, spec fields and a seeded "
            "rollout. Exit code 1 if they differ.")
    _loading(p)
    p.add_argument("--steps", type=int, default=100, metavar="N",
                   help="rollout steps to compare (default 100)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="rollout seed (default 0)")
    p.add_argument("--where", choices=BOUNDARIES, default="subprocess",
                   help="where to rebuild (default: a fresh interpreter)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="give up on the rebuild after this long (default 120)")
    p.add_argument("--ignore-info", action="append", default=[], metavar="KEY",
                   help="leave this info key out of the comparison (values that vary by "
                   "nature, e.g. wall-clock times); repeat for more keys")
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = add("check", "rebuild a sealed pack file and compare it with its seal",
            "Rebuild the env of a sealed pack file (made with specpack.seal(pack) before dump) "
            "in a fresh interpreter and compare its layers, spaces and seeded rollout, step by "
            "step, with the seal the file carries: proof that this machine builds the env that "
            "was captured. Exit code 1 if they differ.",
            "example:\n  specpack check ant.pack --trust")
    _loading(p)
    p.add_argument("--where", choices=("here", *BOUNDARIES), default="subprocess",
                   help="where to rebuild (default: a fresh interpreter; 'here': this process)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="give up on the rebuild after this long (default 120)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = add("run", "build a pack's env and run a seeded rollout",
            "Build the env from a pack file, run a seeded rollout with random actions "
            "(auto-reset at episode ends) and print episodes, returns and steps per second.")
    _loading(p)
    p.add_argument("--steps", type=int, default=1000, metavar="N",
                   help="steps to run (default 1000)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="rollout seed (default 0)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")

    p = add("demo", "show the registry problem and the rescue",
            "Register a custom env inside a script's main guard, then try gymnasium.make(id) "
            "and pack.make() in fork, spawn and forkserver children, a fresh interpreter and "
            "(when installed) a Ray worker.")
    p.add_argument("--no-ray", dest="ray", action="store_false", default=None,
                   help="leave out the Ray worker even if Ray is installed")
    p.add_argument("--json", action="store_true", help="print the results as JSON")

    p = add("audit", "find envs and wrappers that do not survive a process boundary",
            "Find every env (and wrapper) that does not survive a process boundary: capture "
            "here, rebuild in fresh workers, compare. Exit code 1 if anything is not portable.",
            "example:\n  specpack audit minigrid --steps 20\n"
            "  specpack audit --import envs/ant_envs.py CustomAnt-v0\n"
            "  specpack audit --backend pettingzoo pettingzoo.butterfly mpe2")
    p.add_argument("targets", nargs="*", metavar="TARGET",
                   help="env id, namespace ('ALE/'), or entry-point module prefix ('minigrid'); "
                   "none: the whole registry")
    _imports(p, "e.g. one that registers envs")
    p.add_argument("--wrappers", action="store_true",
                   help="also audit every wrapper class of gymnasium.wrappers and the imports")
    p.add_argument("--wrappers-only", action="store_true", help="audit the wrappers alone")
    p.add_argument("--backend", choices=with_trait("audit"), default=DEFAULT_BACKEND,
                   help="what TARGETs name: gymnasium registry entries (the default), or "
                   "PettingZoo families/env modules ('pettingzoo.butterfly', 'mpe2')")
    p.add_argument("--where", choices=BOUNDARIES, default="subprocess",
                   help="kind of worker process (default: a fresh python)")
    p.add_argument("--steps", type=int, default=None, metavar="N",
                   help="rollout length (default 50)")
    p.add_argument("--seed", type=int, default=None, metavar="S", help="rollout seed (default 0)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="number of worker processes (default: the CPU count)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="seconds per env before its worker is killed (default "
                   f"{DEFAULT_TIMEOUT:g})")
    p.add_argument("--reference", choices=REFERENCES, default=None,
                   help="where the reference is built: in forks of this process (the default "
                   "on Linux) or here, one at a time")
    p.add_argument("--verbose", action="store_true",
                   help="also show what each env printed, under it (--json always has it)")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")

    return parser, dict(sub.choices)
