"""The "Do I need this?" table of docs/vs-gymnasium.md: every row is a program run here, both ways.

Each row of the table names a setup in bold (``**class at module level**``) and says what plain
gymnasium does and what specpack does. For every row this module has one program per side,
written to a script and run as ``__main__`` in a fresh interpreter (the main guard, spawn's
re-import of the script and forkserver only behave for real in a real script), under spawn and
forkserver where the row starts workers. Each attempt prints ``RESULT <where> works`` or
``RESULT <where> fails <exception type>``.

What the table's cells must say, checked word for word:

- a cell starts with ``works`` or ``fails``, and that is what every attempt of its side did;
- a failing cell names, in backticks, the exception the program saw (``NameNotFound``), and
  every exception type a cell names was seen: in the parent (``ConnectionResetError``) or on
  the workers' stderr (the worker's own ``AttributeError``). A parent's read from a dead
  worker's pipe fails as ``ConnectionResetError``, ``EOFError`` or ``BrokenPipeError`` by
  timing alone, so the three count as one.

A row without a program, or a program without a row, fails the test.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from docs_blocks import ROOT, child_env

pytestmark = pytest.mark.integration

PAGE = ROOT / "docs" / "vs-gymnasium.md"

#: The env of every program, as a user would write it (a class of their own).
CLASS = '''
class CustomAnt(gymnasium.Env):
    def __init__(self, legs=4):
        self.observation_space = gymnasium.spaces.Box(-1.0, 1.0, (legs,))
        self.action_space = gymnasium.spaces.Discrete(legs)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, False, False, {}
'''

HEADER = '''
import multiprocessing as mp
import os
import pickle
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import gymnasium
import specpack

CONTEXTS = ["spawn", "forkserver"]


def attempt(where, run):
    try:
        run()
    except Exception as e:
        print("RESULT", where, "fails", type(e).__name__, flush=True)
    else:
        print("RESULT", where, "works", flush=True)


def build_id(env_id):
    return gymnasium.make(env_id).reset(seed=0)[0].shape


def build_pack(pack):
    return pack.make().reset(seed=0)[0].shape


def fresh_python(code, data):
    """A fresh interpreter elsewhere (another machine: no script, no registry)."""
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True,
                         cwd=OTHER, check=True).stdout.decode()
    print(out, end="", flush=True)


CHILD = """
import pickle, sys, specpack, gymnasium
try:
    made = {make}
except Exception as e:
    print("RESULT fresh-python fails", type(e).__name__)
else:
    print("RESULT fresh-python works")
"""
'''

#: How the env is registered: the class at module level, or the whole class in the main guard.
MODULE_CLASS = CLASS
GUARD_CLASS = textwrap.indent(CLASS, "    ")

MAKE_VEC_PLAIN = '''
    for ctx in CONTEXTS:
        def run():
            envs = gymnasium.make_vec("CustomAnt-v0", 4, vectorization_mode="async",
                                      vector_kwargs={"context": ctx})
            envs.reset(seed=0)
            envs.close()
        attempt(ctx, run)
'''
MAKE_VEC_SPECPACK = '''
    for ctx in CONTEXTS:
        def run():
            envs = specpack.make_vec(specpack.capture("CustomAnt-v0"), 4, context=ctx)
            envs.reset(seed=0)
            envs.close()
        attempt(ctx, run)
'''

#: row key (the bold words of the first cell) -> (module-level code, main-guard code per side)
ROWS: dict[str, tuple[str, str, dict[str, str]]] = {
    "class at module level": (MODULE_CLASS, 'gymnasium.register("CustomAnt-v0", entry_point=CustomAnt)',
                              {"plain": MAKE_VEC_PLAIN, "specpack": MAKE_VEC_SPECPACK}),
    "class in the main guard": ("", GUARD_CLASS + '\n    gymnasium.register("CustomAnt-v0", '
                                'entry_point=CustomAnt)',
                                {"plain": MAKE_VEC_PLAIN, "specpack": MAKE_VEC_SPECPACK}),
    "string entry point": ("", GUARD_CLASS + '\n    gymnasium.register("CustomAnt-v0", '
                           'entry_point="__main__:CustomAnt")',
                           {"plain": MAKE_VEC_PLAIN, "specpack": MAKE_VEC_SPECPACK}),
    "multiprocessing.Pool / ProcessPoolExecutor": (
        MODULE_CLASS, 'gymnasium.register("CustomAnt-v0", entry_point=CustomAnt)', {
            "plain": '''
    for ctx in CONTEXTS:
        with mp.get_context(ctx).Pool(1) as pool:
            attempt("Pool-" + ctx, lambda: pool.map(build_id, ["CustomAnt-v0"]))
        with ProcessPoolExecutor(1, mp_context=mp.get_context(ctx)) as ex:
            attempt("Executor-" + ctx, lambda: list(ex.map(build_id, ["CustomAnt-v0"])))
''',
            "specpack": '''
    pack = specpack.capture("CustomAnt-v0")
    for ctx in CONTEXTS:
        with mp.get_context(ctx).Pool(1) as pool:
            attempt("Pool-" + ctx, lambda: pool.map(build_pack, [pack]))
        with ProcessPoolExecutor(1, mp_context=mp.get_context(ctx)) as ex:
            attempt("Executor-" + ctx, lambda: list(ex.map(build_pack, [pack])))
'''}),
    "SB3 with an id": (
        MODULE_CLASS, 'gymnasium.register("CustomAnt-v0", entry_point=CustomAnt)\n'
        '    from stable_baselines3.common.env_util import make_vec_env\n'
        '    from stable_baselines3.common.vec_env import SubprocVecEnv', {
            "plain": '''
    for ctx in CONTEXTS:
        attempt(ctx, lambda: make_vec_env("CustomAnt-v0", 2, vec_env_cls=SubprocVecEnv,
                                          vec_env_kwargs={"start_method": ctx}).close())
''',
            "specpack": '''
    pack = specpack.capture("CustomAnt-v0")
    for ctx in CONTEXTS:
        attempt(ctx, lambda: make_vec_env(pack.make, 2, vec_env_cls=SubprocVecEnv,
                                          vec_env_kwargs={"start_method": ctx}).close())
'''}),
    "SB3 with the spec": (
        "", GUARD_CLASS + '\n    gymnasium.register("CustomAnt-v0", entry_point=CustomAnt)\n'
        '    import functools\n'
        '    from stable_baselines3.common.env_util import make_vec_env\n'
        '    from stable_baselines3.common.vec_env import SubprocVecEnv', {
            "plain": '''
    spec = gymnasium.spec("CustomAnt-v0")
    for ctx in CONTEXTS:
        attempt(ctx, lambda: make_vec_env(functools.partial(gymnasium.make, spec), 2,
                                          vec_env_cls=SubprocVecEnv,
                                          vec_env_kwargs={"start_method": ctx}).close())
''',
            "specpack": '''
    pack = specpack.capture("CustomAnt-v0")
    for ctx in CONTEXTS:
        attempt(ctx, lambda: make_vec_env(pack.make, 2, vec_env_cls=SubprocVecEnv,
                                          vec_env_kwargs={"start_method": ctx}).close())
'''}),
    "Ray": (
        MODULE_CLASS, 'gymnasium.register("CustomAnt-v0", entry_point=CustomAnt)\n'
        '    import ray\n'
        '    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)', {
            "plain": '''
    attempt("ray", lambda: ray.get(ray.remote(build_id).remote("CustomAnt-v0")))
''',
            "specpack": '''
    pack = specpack.capture("CustomAnt-v0")
    attempt("ray", lambda: ray.get(ray.remote(build_pack).remote(pack)))
'''}),
    "another machine": (
        MODULE_CLASS, 'gymnasium.register("CustomAnt-v0", entry_point=CustomAnt)', {
            "plain": '''
    fresh_python(CHILD.format(make="gymnasium.make(pickle.load(sys.stdin.buffer))"),
                 pickle.dumps(gymnasium.spec("CustomAnt-v0")))
''',
            "specpack": '''
    fresh_python(CHILD.format(make="pickle.load(sys.stdin.buffer).make()"),
                 pickle.dumps(specpack.capture("CustomAnt-v0")))
'''}),
    "a file": (
        MODULE_CLASS, 'gymnasium.register("CustomAnt-v0", entry_point=CustomAnt)', {
            "plain": '''
    def run():
        with open("ant.json", "w") as f:
            f.write(gymnasium.spec("CustomAnt-v0").to_json())
    attempt("to_json", run)
''',
            "specpack": '''
    specpack.dump(specpack.capture("CustomAnt-v0"), "ant.pack")
    path = os.path.abspath("ant.pack")
    fresh_python(CHILD.format(make=f"specpack.load({path!r}, trust=True).make()"), b"")
'''}),
}

#: How a parent's read from a dead worker's pipe fails, depending on timing only.
PIPE_ERRORS = frozenset({"ConnectionResetError", "EOFError", "BrokenPipeError"})
_EXC = re.compile(r"`([A-Z]\w*(?:Error|NotFound|Exception))`")
_BOLD = re.compile(r"^\*\*(?P<key>.+?)\*\*")


def table_rows(text: str) -> dict[str, tuple[str, str]]:
    """The table under "Do I need this?": row key -> (plain gymnasium cell, specpack cell)."""
    section = text.split("## Do I need this?", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = _BOLD.match(cells[0]) if len(cells) == 3 else None
        if m:
            rows[m.group("key").strip("`")] = (cells[1], cells[2])
    return rows


def program(key: str, side: str) -> str:
    """The script of one row and side, as the user would write it."""
    module_code, guard_code, sides = ROWS[key]
    return (HEADER + module_code + '\n\nif __name__ == "__main__":\n    ' + guard_code.strip("\n")
            .lstrip() + "\n" + sides[side])


def run_program(code: str, tmp: Path) -> tuple[list[tuple[str, list[str]]], str]:
    """Run ``code`` as a script; its attempts ``(outcome, exception names)`` and its stderr."""
    other = tmp / "other"
    other.mkdir(exist_ok=True)
    script = tmp / "need.py"
    script.write_text(code.replace("cwd=OTHER", f"cwd={str(other)!r}"), encoding="utf-8")
    proc = subprocess.run([sys.executable, script.name], cwd=tmp, env=child_env(tmp),
                          capture_output=True, text=True, timeout=240,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    results = []
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            words = line.split()
            results.append((words[2], re.findall(r"[A-Za-z_]\w*", " ".join(words[3:]))))
    assert results, f"no RESULT line\n{proc.stdout}\n{proc.stderr}"
    return results, proc.stderr


def check_cell(cell: str, results: list[tuple[str, list[str]]], stderr: str) -> None:
    """The cell's first word is every attempt's outcome; the exceptions it names were seen."""
    outcomes = {outcome for outcome, _ in results}
    assert len(outcomes) == 1, f"the attempts disagree: {results}"
    outcome = outcomes.pop()
    assert cell.split()[0].rstrip(":,") == outcome, f"cell {cell!r}, the program: {results}"
    def canon(name: str) -> str:
        return "a broken pipe" if name in PIPE_ERRORS else name

    named = {canon(n) for n in _EXC.findall(cell)}
    parent = {canon(name) for _, names in results for name in names}
    workers = {canon(n) for n in re.findall(r"\b[A-Z]\w*(?:Error|NotFound|Exception)\b", stderr)}
    if outcome == "fails":
        assert parent & named, f"cell {cell!r} names none of the exceptions raised: {parent}"
    unseen = named - parent - workers
    assert not unseen, f"cell {cell!r} names {unseen}, which the program never saw"


def test_every_row_of_the_table_has_a_program_and_every_program_a_row() -> None:
    assert set(table_rows(PAGE.read_text(encoding="utf-8"))) == set(ROWS)


@pytest.mark.parametrize("side", ["plain", "specpack"])
@pytest.mark.parametrize("key", list(ROWS))
def test_need_table_row_says_what_the_program_does(key: str, side: str, tmp_path: Path) -> None:
    plain, specpack_cell = table_rows(PAGE.read_text(encoding="utf-8"))[key]
    results, stderr = run_program(program(key, side), tmp_path)
    check_cell(plain if side == "plain" else specpack_cell, results, stderr)


def test_check_cell_fails_a_cell_that_says_something_else() -> None:
    """The check can fail: a wrong outcome, and an exception nobody saw."""
    with pytest.raises(AssertionError):
        check_cell("works", [("fails", ["NameNotFound"])], "")
    with pytest.raises(AssertionError):
        check_cell("fails: `NameNotFound` and `EOFError`", [("fails", ["NameNotFound"])], "")
    check_cell("fails: `NameNotFound`", [("fails", ["NameNotFound"])], "")
    check_cell("fails: `ConnectionResetError`", [("fails", ["EOFError"])], "")
