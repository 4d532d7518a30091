"""Each message fits where it is read: the command line's errors name its flags (``--import``,
``--entry-point``, ``--trust``, ``--key-file``, ``--allow``), Python's name Python
(``specpack.capture(MyEnv)``, ``trust=True``); a list in a message (the payloads a file carries)
is printed one item a line; ``inspect`` names the entry point a spec registered with a class
builds; ``capture --entry-point module:Class`` captures without a registry.

Every command line case runs ``python -m specpack`` in a fresh interpreter.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import gymnasium
import pytest
from _cli_support import assert_error, assert_one_line_error, env_modules, specpack

import specpack as sp
from specpack import SignatureError, UnknownEnvError, UntrustedPackError
from specpack._core._errors import SpecPackError

pytestmark = pytest.mark.integration

#: What only Python code can write, never right on the command line.
PYTHON_ONLY = ("specpack.capture(", "trust=True", "key=K", "allow=", "env_kwargs=")


def _no_python(text: str) -> None:
    for word in PYTHON_ONLY:
        assert word not in text, (word, text)


def test_an_error_keeps_its_fix_per_surface_through_pickle() -> None:
    e = SpecPackError("x.pack: refused.", python="Pass trust=True.", cli="Add --trust.")
    assert str(e) == "x.pack: refused. Pass trust=True."
    assert e.for_surface("cli") == "x.pack: refused. Add --trust."
    again = pickle.loads(pickle.dumps(e))
    assert (str(again), again.for_surface("cli")) == (str(e), e.for_surface("cli"))
    plain = SpecPackError("no fix")
    assert plain.for_surface("cli") == plain.for_surface("python") == "no fix"


def test_an_unknown_id_suggests_import_and_entry_point_on_the_cli_and_capture_in_python(
        tmp_path: Path) -> None:
    line = assert_one_line_error(specpack("capture", "CartPol-v1", "-o", "x.pack", cwd=tmp_path),
                                 "did you mean 'CartPole-v1'?", "--import MODULE",
                                 "specpack capture --entry-point module:Class")
    _no_python(line)
    with pytest.raises(UnknownEnvError) as info:
        sp.capture("CartPol-v1")
    assert "specpack.capture(MyEnv)" in str(info.value) and "--" not in str(info.value)


@pytest.fixture
def by_value_file(tmp_path: Path) -> Path:
    """A file with two by-value payloads: the env's code and a lambda in a wrapper."""
    env = gymnasium.wrappers.TransformReward(gymnasium.make("CartPole-v1"), lambda r: 2 * r)
    path = tmp_path / "two.pack"
    sp.dump(sp.capture(env, by_value=True), path)
    return path


def test_verify_of_an_untrusted_file_names_trust_and_lists_each_payload_on_its_line(
        by_value_file: Path) -> None:
    lines = assert_error(specpack("verify", by_value_file.name, cwd=by_value_file.parent),
                         "carries 2 by-value payload(s)", "Add --trust", "--key-file PATH")
    _no_python("\n".join(lines))
    payloads = [ln for ln in lines if ln.startswith("  - ")]
    assert len(payloads) == 2, lines
    assert any("<lambda>" in ln for ln in payloads) and any("CartPoleEnv" in ln
                                                           for ln in payloads), payloads
    with pytest.raises(UntrustedPackError) as info:
        sp.load(by_value_file)
    assert "Pass trust=True" in str(info.value) and "--trust" not in str(info.value)


def test_signed_file_errors_name_key_file_on_the_cli(by_value_file: Path, tmp_path: Path) -> None:
    key = b"k" * 32
    signed = tmp_path / "signed.pack"
    sp.dump(sp.load(by_value_file, trust=True), signed, key=key)
    (tmp_path / "pack.key").write_bytes(key)
    without = assert_error(specpack("run", "signed.pack", cwd=tmp_path),
                           "The file is signed", "add --key-file PATH to check it, or --trust")
    _no_python("\n".join(without))
    unsigned = assert_one_line_error(
        specpack("run", by_value_file.name, "--key-file", "pack.key", cwd=tmp_path),
        "the file is not signed", "leave out --key-file (by-value code then needs --trust)")
    _no_python(unsigned)
    with pytest.raises(SignatureError, match="load it without key"):
        sp.load(by_value_file, key=key)


def test_allow_refusals_name_the_allow_flag(tmp_path: Path) -> None:
    env_modules(tmp_path)
    made = specpack("capture", "CliAnt-v0", "--import", "cli_ant_envs", "--by-reference",
                    "-o", "ant.pack", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    outside = assert_one_line_error(
        specpack("run", "ant.pack", "--allow", "gymnasium", cwd=tmp_path),
        "names code outside allow list ['gymnasium']", "Add --allow cli_ant_envs")
    _no_python(outside)
    bad = assert_one_line_error(specpack("run", "ant.pack", "--allow", "not a module",
                                         cwd=tmp_path),
                                "'not a module' is not an allow entry", "(in --allow not a module)")
    _no_python(bad)
    with pytest.raises(UntrustedPackError, match=r"Add 'cli_ant_envs' to allow="):
        sp.load(tmp_path / "ant.pack", allow=["gymnasium"])


def test_capture_with_a_short_key_file_says_how_to_make_a_key(tmp_path: Path) -> None:
    (tmp_path / "short.key").write_bytes(b"password")
    line = assert_one_line_error(
        specpack("capture", "CartPole-v1", "--key-file", "short.key", "-o", "x.pack",
                 cwd=tmp_path),
        "the signing key is 8 bytes", "head -c 32 /dev/urandom > pack.key")
    assert not (tmp_path / "x.pack").exists(), line


def test_a_kwarg_named_like_a_capture_option_reaches_the_env(tmp_path: Path) -> None:
    env_modules(tmp_path)
    (tmp_path / "opt_envs.py").write_text(
        "from cli_ant_envs import Ant\n\n"
        "class OptAnt(Ant):\n"
        "    def __init__(self, backend='cpu', legs=4):\n"
        "        super().__init__(legs=legs)\n"
        "        self.backend = backend\n")
    proc = specpack("capture", "--entry-point", "opt_envs:OptAnt", "--kwarg", 'backend="jax"',
                    "-o", "opt.pack", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert dict(sp.load(tmp_path / "opt.pack", trust=True).kwargs) == {"backend": "jax"}


# -- capture --entry-point ----------------------------------------------------------------------

HELLO = '''
import gymnasium
import numpy as np


class HelloEnv(gymnasium.Env):
    def __init__(self, size=3):
        self.size = size
        self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, (size,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(self.size, np.float32), {}

    def step(self, action):
        return np.zeros(self.size, np.float32), 1.0, False, False, {}
'''


@pytest.fixture
def hello_path(tmp_path: Path) -> dict[str, str]:
    """``hello_envs`` in a temporary folder on PYTHONPATH, not in the working directory."""
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "hello_envs.py").write_text(HELLO)
    (tmp_path / "work").mkdir()
    return {"PYTHONPATH": os.pathsep.join([str(mods), os.environ.get("PYTHONPATH", "")])}


def test_capture_entry_point_captures_a_class_without_a_registry(
        tmp_path: Path, hello_path: dict[str, str]) -> None:
    work = tmp_path / "work"
    proc = specpack("capture", "--entry-point", "hello_envs:HelloEnv", "--kwarg", "size=5",
                    "--max-episode-steps", "7", "-o", "hello.pack", cwd=work, env=hello_path)
    assert proc.returncode == 0, proc.stderr
    assert "HelloEnv(size=5)" in proc.stdout and "warning" not in proc.stderr, proc.stderr
    loaded = sp.load(work / "hello.pack")  # by reference: importable where it was captured
    ref = loaded.entry_point
    assert (ref.module, ref.qualname, ref.by_value) == ("hello_envs", "HelloEnv", False)
    assert dict(loaded.kwargs) == {"size": 5}
    assert loaded.max_episode_steps == 7
    ran = specpack("run", "hello.pack", "--steps", "20", cwd=work, env=hello_path)
    assert ran.returncode == 0, ran.stderr
    assert "episodes: 2 finished" in ran.stdout, ran.stdout
    shown = specpack("inspect", "hello.pack", cwd=work, env=hello_path)
    assert "entry_point=hello_envs:HelloEnv" in shown.stdout, shown.stdout
    assert "entry_point=None" not in shown.stdout


def test_capture_entry_point_takes_a_py_path_as_import_does(
        tmp_path: Path, hello_path: dict[str, str]) -> None:
    work = tmp_path / "work"
    proc = specpack("capture", "--entry-point", "../mods/hello_envs.py:HelloEnv", "-o", "p.pack",
                    cwd=work, env=hello_path)
    assert proc.returncode == 0, proc.stderr
    assert sp.load(work / "p.pack").entry_point.qualname == "HelloEnv"


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--entry-point", "hello_envs:HelloEnvv"],
         ["--entry-point hello_envs:HelloEnvv: hello_envs has no attribute 'HelloEnvv';",
          "did you mean 'HelloEnv'?"]),
        (["--entry-point", "hello_envs"], ["expected MODULE:CLASS"]),
        (["--entry-point", "no_such_mod_xyz:Env"], ["--entry-point no_such_mod_xyz",
                                                    "no module named 'no_such_mod_xyz'"]),
        (["CartPole-v1", "--entry-point", "hello_envs:HelloEnv"], ["not both"]),
        ([], ["give either an env ID", "--entry-point MODULE:CLASS"]),
    ],
)
def test_capture_entry_point_errors_name_the_flag(
        tmp_path: Path, hello_path: dict[str, str], args: list[str], needles: list[str]) -> None:
    proc = specpack("capture", *args, "-o", "x.pack", cwd=tmp_path / "work", env=hello_path)
    assert_one_line_error(proc, *needles)
    assert not (tmp_path / "work" / "x.pack").exists()


def test_inspect_names_the_entry_point_of_a_spec_registered_with_a_class(tmp_path: Path) -> None:
    env_modules(tmp_path)
    by_ref = specpack("capture", "CliAnt-v0", "--import", "cli_ant_envs", "--by-reference",
                      "-o", "ref.pack", cwd=tmp_path)
    assert by_ref.returncode == 0, by_ref.stderr
    ref = specpack("inspect", "ref.pack", cwd=tmp_path).stdout
    assert "entry_point=cli_ant_envs:Ant" in ref and "entry_point=None" not in ref, ref
    made = specpack("capture", "CliAnt-v0", "--import", "envs/cli_ant_envs.py", "-o", "ant.pack",
                    cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    shown = specpack("inspect", "ant.pack", cwd=tmp_path)
    spec = next(ln for ln in shown.stdout.splitlines() if ln.startswith("spec"))
    assert "entry_point=<by value: cli_ant_envs:Ant>" in spec, spec


def test_a_reference_that_does_not_import_here_suggests_by_value_on_the_cli(
        tmp_path: Path) -> None:
    env_modules(tmp_path)
    made = specpack("capture", "CliAnt-v0", "--import", "cli_ant_envs", "--by-reference",
                    "-o", "ref.pack", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    line = assert_one_line_error(specpack("run", "../ref.pack", cwd=elsewhere),
                                 "cannot import cli_ant_envs", "or capture with --by-value")
    _no_python(line)
    assert "by_value=True" not in line


@pytest.mark.parametrize("command", ["run", "verify", "check"])
def test_a_missing_asset_is_one_line_naming_capture_self_contained_in_cli_terms(
        tmp_path: Path, command: str) -> None:
    # issue 31: verify and check said "rebuild failed" over 30 lines of traceback (exit 1)
    # and named the Python fix; all three now say what run says, one line, exit code 2.
    data = tmp_path / "terrain.bin"
    data.write_bytes(b"\x00" * 16)
    pack = sp.capture("CartPole-v1", assets=[data])
    sp.dump(sp.seal(pack, 5) if command == "check" else pack, tmp_path / "cart.pack")
    data.unlink()
    line = assert_one_line_error(specpack(command, "cart.pack", cwd=tmp_path),
                                 f"the asset {data} is missing on this node",
                                 "or capture it again with specpack capture ... "
                                 "--self-contained so the pack file carries it")
    _no_python(line)
    assert "capture(...," not in line and "self_contained=True" not in line
    with pytest.raises(sp.AssetError) as info:
        pack.make()
    assert str(info.value).endswith(
        "or capture(..., self_contained=True) so the pack carries it")


@pytest.mark.parametrize(("args", "needles"), [
    (("--steps", "-1"), ("--steps -1: must be 0 or more",)),
    (("--jobs", "0"), ("--jobs 0: must be 1 or more",)),
    (("--timeout", "0"), ("--timeout 0.0: must be a positive number of seconds",)),
    (("--wrappers", "--backend", "pettingzoo"),
     ("--wrappers audits gymnasium wrapper classes; drop it with --backend pettingzoo",)),
    (("Nope-v9",), ("matches no registered env", "(--import MODULE)")),
])
def test_the_audits_own_errors_name_its_flags_not_python_keywords(
        tmp_path: Path, args: tuple[str, ...], needles: tuple[str, ...]) -> None:
    line = assert_one_line_error(specpack("audit", *args, cwd=tmp_path), *needles)
    _no_python(line)
    for word in ("steps=", "jobs=", "timeout=", "wrappers=", "backend=", "imports="):
        assert word not in line, (word, line)


def test_the_audits_python_errors_keep_naming_python_keywords() -> None:
    with pytest.raises(UnknownEnvError) as info:
        sp.audit(["Nope-v9"])
    assert str(info.value).endswith("(imports=[...])") and "--import" not in str(info.value)
    assert info.value.for_surface("cli").endswith("(--import MODULE)")
    with pytest.raises(SpecPackError, match="wrappers= audits gymnasium wrapper classes"):
        sp.audit(["pettingzoo.butterfly"], backend="pettingzoo", wrappers=True)


def test_verify_timeout_names_the_flag_on_the_cli_and_the_keyword_in_python(tmp_path: Path) -> None:
    sp.dump(sp.capture("CartPole-v1"), tmp_path / "c.pack")
    line = assert_one_line_error(specpack("verify", "c.pack", "--timeout", "0", cwd=tmp_path),
                                 "--timeout 0.0 must be a positive number of seconds")
    assert "timeout=" not in line, line
    with pytest.raises(SpecPackError, match=r"^timeout=0 must be a positive number"):
        sp.verify(sp.capture("CartPole-v1"), timeout=0)
