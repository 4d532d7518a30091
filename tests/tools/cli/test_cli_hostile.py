"""Issue 31, the command line: every string from a file or an env is shown escaped, what the
user can fix is one line and exit code 2, and the command line alone makes a sealed,
self-contained file.

- **Escaping** (one function, :func:`specpack._core._text.printable`): a pack file whose id, kwarg
  name, note, ``versions`` key or value, asset path or ``requires`` name or version holds a
  line break followed by ``INJECTED signature valid`` is shown by ``inspect``, ``check``,
  ``verify`` and ``run`` with the break escaped: no line of their output starts with the
  injected text, and no bidi mark reaches the terminal.
- **One line, exit code 2** for a missing distribution, a missing file or a build that fails
  here, in ``verify`` and ``check`` as in ``run``; the traceback only with ``--debug``, naming
  specpack's classes as users import them (``specpack.BuildError``).
- **capture --seal STEPS --seed S --self-contained --asset PATH**: the file it writes passes
  ``specpack check`` in another folder without the asset.
- **inspect** marks the kwargs that are files, and with ``--key-file`` and a valid signature
  no longer says that loading needs ``--trust``.

Every case runs ``python -m specpack`` in a fresh interpreter. On 1161eb9 every test here
fails (27) except ``test_verify_escapes_a_hostile_id`` (verify's headline was already
escaped) and the bidi marks of ``test_inspect_escapes_every_line_break_and_bidi_mark_the_same_way``
(inspect escaped each printed line; the line breaks are what failed there).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _cli_support import assert_one_line_error, specpack

import specpack as sp
from specpack._core._text import printable

pytestmark = pytest.mark.integration

INJECTED = "INJECTED signature valid"
#: Every line break ``str.splitlines`` knows, and the bidi marks.
BREAKS = ["\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
        "\u2069", "\u200e", "\u200f", "\u061c"]
HOSTILE = "x\n" + INJECTED

FILE_ENV = '''
import gymnasium


class Corridor(gymnasium.Env):
    """A corridor as long as the file it is given has characters."""

    def __init__(self, path, speed=1):
        with open(path) as f:
            self.n = len(f.read().strip())
        self.speed = speed
        self.observation_space = gymnasium.spaces.Discrete(self.n + 1)
        self.action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = int(self.np_random.integers(0, 2))
        return self.x, {}

    def step(self, action):
        self.x = min(self.n, self.x + int(action) * self.speed)
        return self.x, float(self.x), self.x == self.n, False, {}


gymnasium.register("CliCorridor-v0", entry_point=Corridor)
'''


def _injected(proc: Any) -> list[str]:
    """The lines of a command's output (stdout and stderr) that start with the injected text
    (split as a terminal or ``str.splitlines`` would)."""
    return [line for line in (proc.stdout + proc.stderr).splitlines()
            if line.strip().startswith(INJECTED)]


def _no_raw(proc: Any) -> None:
    for c in BIDI + [b for b in BREAKS if b != "\n"]:
        assert c not in proc.stdout + proc.stderr, (c, proc.stdout, proc.stderr)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The manifest of a CartPole pack with one (not carried) asset, and a sealed one."""
    d = tmp_path_factory.mktemp("hostile")
    data = d / "terrain.bin"
    data.write_bytes(b"\x01" * 8)
    sp.dump(sp.capture("CartPole-v1", assets=[data], max_episode_steps=50), d / "base.pack")
    sp.dump(sp.seal(sp.capture("CartPole-v1", max_episode_steps=50), 10), d / "sealed.pack")
    return {"dir": d, "manifest": json.loads((d / "base.pack").read_text()),
            "sealed": json.loads((d / "sealed.pack").read_text())}


def _write(path: Path, manifest: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> Path:
    m = json.loads(json.dumps(manifest))
    edit(m)
    path.write_text(json.dumps(m, indent=2))
    return path


def _set(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda m: m.__setitem__(field, value)


def _asset_path(m: dict[str, Any], value: str) -> None:
    m["assets"][0]["path"] = value


#: Each field of a file whose strings ``inspect`` shows, set to ``text``.
FIELDS: dict[str, Callable[[str], Callable[[dict[str, Any]], None]]] = {
    "id": lambda t: _set("id", t),
    "kwarg name": lambda t: lambda m: m["kwargs"].__setitem__(t, True),
    "note": lambda t: _set("notes", [t]),
    "versions value": lambda t: lambda m: m["versions"].__setitem__("gymnasium", t),
    "versions key": lambda t: lambda m: m["versions"].__setitem__(t, "1.0"),
    "asset path": lambda t: lambda m: _asset_path(m, "/tmp/" + t),
    "requires name": lambda t: _set("requires", {t: "1.0"}),
    "requires version": lambda t: _set("requires", {"gymnasium": t}),
}


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_inspect_shows_a_line_break_in_each_field_escaped(
        base: dict[str, Any], tmp_path: Path, field: str) -> None:
    # On 1161eb9 each of these printed "INJECTED signature valid" as a line of its own.
    path = _write(tmp_path / "h.pack", base["manifest"], FIELDS[field](HOSTILE))
    proc = specpack("inspect", path.name, cwd=tmp_path)
    assert not _injected(proc), (proc.stdout, proc.stderr)
    if proc.returncode == 0:  # a file that is refused instead is a one-line error
        assert "x\\nINJECTED signature valid" in proc.stdout, proc.stdout
    else:
        assert_one_line_error(proc)


@pytest.mark.parametrize("char", BREAKS + BIDI, ids=lambda c: f"U+{ord(c):04X}")
def test_inspect_escapes_every_line_break_and_bidi_mark_the_same_way(
        base: dict[str, Any], tmp_path: Path, char: str) -> None:
    path = _write(tmp_path / "h.pack", base["manifest"],
                  lambda m: (m.__setitem__("id", f"x{char}{INJECTED}"),
                             m.__setitem__("notes", [f"n{char}{INJECTED}"])))
    proc = specpack("inspect", path.name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not _injected(proc), proc.stdout
    _no_raw(proc)
    escaped = printable(char)
    assert escaped == ascii(char)[1:-1]  # as repr writes it
    assert f"x{escaped}{INJECTED}" in proc.stdout and f"n{escaped}{INJECTED}" in proc.stdout


def test_check_escapes_a_hostile_id_above_its_report(base: dict[str, Any], tmp_path: Path) -> None:
    # On 1161eb9 the id printed "...: identical" as a line above the real report.
    fake = "CartPole-v1\nCartPole-v1: check against the seal (fresh interpreter): identical"
    path = _write(tmp_path / "h.pack", base["sealed"], _set("id", fake))
    proc = specpack("check", path.name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("CartPole-v1\\nCartPole-v1: check against the seal (fresh "
                               "interpreter): identical: check against the seal"), lines
    assert not any(ln.startswith("CartPole-v1: ") for ln in lines), lines


def test_check_escapes_the_versions_a_seal_was_made_with(
        base: dict[str, Any], tmp_path: Path) -> None:
    # On 1161eb9 the seal's versions (from the file) printed the injected text as lines.
    def edit(m: dict[str, Any]) -> None:
        m["seal"]["made_with"]["gymnasium"] = "1.4.0" + "\n" + INJECTED
        m["seal"]["made_with"][HOSTILE] = "1"

    path = _write(tmp_path / "h.pack", base["sealed"], edit)
    proc = specpack("check", path.name, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not _injected(proc), proc.stdout
    assert "gymnasium 1.4.0\\nINJECTED signature valid" in proc.stdout, proc.stdout


def test_report_texts_escape_names_from_the_env_and_the_file() -> None:
    # str(CheckReport) (what specpack.check(pack) prints in Python too) and a difference's values.
    from specpack._tools._verify.render import show
    from specpack._tools._verify.report import CheckReport

    report = CheckReport(status="not_identical", differences=[f"step 1: {HOSTILE}"],
                         where="subprocess", steps=3, seed=0, notes=[HOSTILE + "\u202e"],
                         sealed_with={"gymnasium": HOSTILE}, checked_with={"gymnasium": "1"})
    text = str(report)
    assert not any(ln.startswith(INJECTED) for ln in text.splitlines()), text
    assert "note: x\\nINJECTED signature valid\\u202e" in text and "\u202e" not in text
    assert "step 1: x" in text  # a finding's own lines stay lines (indented), escaped each
    shown = show(["global", HOSTILE + "\u2028"])
    assert shown == "x\\nINJECTED signature valid\\u2028", shown


def test_verify_escapes_a_hostile_id(base: dict[str, Any], tmp_path: Path) -> None:
    path = _write(tmp_path / "h.pack", base["sealed"], _set("id", HOSTILE + "\u202e"))
    proc = specpack("verify", path.name, "--steps", "5", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not _injected(proc) and "x\\nINJECTED signature valid\\u202e" in proc.stdout
    _no_raw(proc)


def test_run_escapes_a_hostile_id_and_an_env_error_holding_a_line_break(
        base: dict[str, Any], tmp_path: Path) -> None:
    # On 1161eb9 run printed the id raw, and the constructor's TypeError (which names the
    # hostile kwarg) as two lines of the error.
    path = _write(tmp_path / "h.pack", base["sealed"], _set("id", HOSTILE))
    proc = specpack("run", path.name, "--steps", "5", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not _injected(proc) and proc.stdout.startswith("x\\nINJECTED signature valid: built")
    bad = _write(tmp_path / "k.pack", base["sealed"],
                 lambda m: m["kwargs"].__setitem__(HOSTILE, True))
    line = assert_one_line_error(specpack("run", bad.name, cwd=tmp_path),
                                 "unexpected keyword argument 'x\\nINJECTED signature valid'",
                                 "(run again with --debug for the traceback)")
    assert "specpack._" not in line


@pytest.mark.parametrize("command", ["verify", "check"])
def test_a_missing_distribution_is_one_line_and_exit_2_traceback_with_debug(
        base: dict[str, Any], tmp_path: Path, command: str) -> None:
    # On 1161eb9: "rebuild failed: ... could not be built in a fresh interpreter", a finding
    # "the build here failed", 25 lines of traceback, exit code 1.
    path = _write(tmp_path / "m.pack", base["sealed"],
                  _set("requires", {"specpack-no-such-dist": "1.0"}))
    line = assert_one_line_error(specpack(command, path.name, cwd=tmp_path),
                                 "needs distributions that are not installed here",
                                 "pip install specpack-no-such-dist==1.0")
    assert "rebuild failed" not in line
    run = assert_one_line_error(specpack("run", path.name, cwd=tmp_path))
    assert run == line  # one mechanism: what run says
    debug = specpack(command, path.name, "--debug", cwd=tmp_path)
    assert debug.returncode == 2 and "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.strip().splitlines()[-1] == line


def test_verify_of_a_pack_that_fails_to_build_here_is_one_line_naming_public_classes(
        base: dict[str, Any], tmp_path: Path) -> None:
    # On 1161eb9: the headline said the rebuild failed in a fresh interpreter while the finding
    # said the build here failed, with the traceback naming specpack._core._errors.BuildTypeError.
    path = _write(tmp_path / "k.pack", base["sealed"],
                  lambda m: m["kwargs"].__setitem__("no_such_kwarg", True))
    line = assert_one_line_error(specpack("verify", path.name, "--steps", "3", cwd=tmp_path),
                                 "CartPole-v1: the build here failed: ",
                                 "unexpected keyword argument 'no_such_kwarg'",
                                 "(run again with --debug for the traceback)")
    assert "rebuild failed" not in line and "fresh interpreter" not in line
    # BuildTypeError is public (specpack.BuildTypeError, a BuildError and a TypeError)
    assert "the build here failed: BuildTypeError: " in line and "specpack._" not in line
    doc = specpack("verify", path.name, "--steps", "3", "--json", cwd=tmp_path)
    assert doc.returncode == 2 and json.loads(doc.stdout)["status"] == "rebuild_error"
    for command in ("verify", "run", "check"):
        debug = specpack(command, path.name, "--debug", cwd=tmp_path)
        assert debug.returncode == 2, (command, debug.stdout, debug.stderr)
        assert "Traceback (most recent call last)" in debug.stderr
        assert "specpack.BuildTypeError: " in debug.stderr, (command, debug.stderr)
        assert "specpack._" not in debug.stderr, (command, debug.stderr)


def test_public_names_name_specpacks_classes_as_users_import_them() -> None:
    from specpack._core._errors import BuildTypeError, UnknownKeywordError
    from specpack._core._text import public_name, public_names

    text = ("specpack._core._errors.BuildTypeError: a\n"
            "specpack._core._errors.UnknownKeywordError: b\n"
            "specpack._core._errors.UnexpectedKwargError: c\n"
            "specpack._core._build.make and specpack.__main__.x stay")
    # both are exported by specpack (a BuildError and a TypeError; a SpecPackError and a
    # TypeError), so they are named as themselves
    assert (public_name(BuildTypeError), public_name(UnknownKeywordError)) == (
        "BuildTypeError", "UnknownKeywordError")
    assert public_names(text).splitlines() == [
        "specpack.BuildTypeError: a", "specpack.UnknownKeywordError: b",
        "specpack.UnexpectedKwargError: c", "specpack._core._build.make and specpack.__main__.x stay"]


def test_capture_seal_self_contained_asset_makes_a_file_check_accepts_elsewhere(
        tmp_path: Path) -> None:
    # On 1161eb9 capture had none of --seal, --seed, --self-contained, --asset.
    (tmp_path / "corridor_env.py").write_text(FILE_ENV)
    (tmp_path / "maps").mkdir()
    (tmp_path / "maps" / "corridor.txt").write_text("########\n")
    (tmp_path / "key").write_bytes(b"k" * 32)
    made = specpack("capture", "CliCorridor-v0", "--import", "corridor_env.py",
                    "--kwarg", 'path="maps/corridor.txt"', "--kwarg", "speed=2",
                    "--self-contained", "--asset", "maps", "--asset", "maps/corridor.txt",
                    "--seal", "20", "--seed", "3", "--key-file", "key", "-o", "c.pack",
                    cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "sealed (20 steps, seed 3)" in made.stdout
    pack = sp.load(tmp_path / "c.pack", key=b"k" * 32)
    assert pack.sealed is not None and (pack.sealed.steps, pack.sealed.seed) == (20, 3)
    assert {Path(a.path).name for a in pack.assets} >= {"maps", "corridor.txt"}
    assert all(a.carried for a in pack.assets)
    shown = specpack("inspect", "c.pack", "--key-file", "key", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    kwargs = [ln for ln in shown.stdout.splitlines() if " = " in ln]
    path_row = next(ln for ln in kwargs if "path = " in ln)
    speed_row = next(ln for ln in kwargs if "speed = " in ln)
    assert "[file: asset" in path_row and "carried]" in path_row, path_row
    assert "[file" not in speed_row, speed_row
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "c.pack").write_bytes((tmp_path / "c.pack").read_bytes())
    (elsewhere / "key").write_bytes(b"k" * 32)
    (tmp_path / "maps" / "corridor.txt").unlink()
    checked = specpack("check", "c.pack", "--key-file", "key", cwd=elsewhere)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.startswith("CliCorridor-v0: check against the seal (fresh "
                                     "interpreter, 20 steps, seed 3"), checked.stdout


def test_capture_seed_needs_seal(tmp_path: Path) -> None:
    assert_one_line_error(specpack("capture", "CartPole-v1", "--seed", "3", "-o", "c.pack",
                                   cwd=tmp_path), "--seed 3", "add --seal STEPS")
    assert_one_line_error(specpack("capture", "CartPole-v1", "--seal", "0", "-o", "c.pack",
                                   cwd=tmp_path), "--seal 0", "1 or more")
    assert not (tmp_path / "c.pack").exists()


def test_inspect_with_a_valid_key_file_does_not_say_loading_needs_trust(tmp_path: Path) -> None:
    # On 1161eb9 the trust row said "loading it needs --trust, or --key-file ..." anyway.
    (tmp_path / "corridor_env.py").write_text(FILE_ENV)
    (tmp_path / "corridor.txt").write_text("####\n")
    (tmp_path / "key").write_bytes(b"s" * 32)
    made = specpack("capture", "CliCorridor-v0", "--import", "corridor_env.py", "--by-value",
                    "--kwarg", 'path="corridor.txt"', "--key-file", "key", "-o", "s.pack",
                    cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    signed = specpack("inspect", "s.pack", "--key-file", "key", cwd=tmp_path)
    assert signed.returncode == 0, signed.stderr
    trust = next(ln for ln in signed.stdout.splitlines() if ln.startswith("trust"))
    assert "needs --trust" not in trust and "needs no --trust" in trust, trust
    plain = specpack("inspect", "s.pack", cwd=tmp_path)
    trust = next(ln for ln in plain.stdout.splitlines() if ln.startswith("trust"))
    assert "loading it needs --trust, or --key-file" in trust, trust


NOISY_ENV = '''
import os, sys
import gymnasium

LOUD = "\\nINJECTED signature valid\\x1b[2J\\u202eevil"


class Noisy(gymnasium.Env):
    """Prints hostile text from Python and from C level (fd 1 and fd 2) as it runs."""

    def __init__(self):
        self.observation_space = gymnasium.spaces.Discrete(3)
        self.action_space = gymnasium.spaces.Discrete(2)
        print("built" + LOUD)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        sys.stderr.write("reset" + LOUD + "\\n")
        os.write(1, ("fd1" + LOUD + "\\n").encode())
        os.write(2, ("fd2" + LOUD).encode())  # no line end: shown all the same
        return 0, {}

    def step(self, action):
        print("step" + LOUD, flush=True)
        return 0, 0.0, False, False, {}


gymnasium.register("CliNoisy-v0", entry_point=Noisy)
'''


@pytest.mark.parametrize("command", ["run", "verify", "check"])
def test_what_the_env_prints_is_shown_escaped_by_every_command(command: str,
                                                               tmp_path: Path) -> None:
    # On 1161eb9 `specpack run` let the env write to the terminal as it liked: a line break in
    # its output made a line of its own ("INJECTED signature valid"), an ESC cleared the screen.
    (tmp_path / "noisy_env.py").write_text(NOISY_ENV)
    made = specpack("capture", "CliNoisy-v0", "--import", "noisy_env.py", "--self-contained",
                    "--seal", "3", "-o", "n.pack", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    extra = ["--steps", "3"] if command in ("run", "verify") else []
    shown = specpack(command, "n.pack", "--trust", *extra, cwd=tmp_path)
    assert shown.returncode == 0, (shown.stdout, shown.stderr)
    assert not _injected(shown), (shown.stdout, shown.stderr)
    assert "\x1b" not in shown.stdout + shown.stderr and "\u202e" not in shown.stderr
    if command == "run":  # run builds here: every print of the env is shown, escaped
        for where in ("built", "reset", "fd1", "fd2", "step"):
            assert f"{where}\\nINJECTED signature valid\\x1b[2J\\u202eevil" in shown.stderr, (
                where, shown.stderr)
