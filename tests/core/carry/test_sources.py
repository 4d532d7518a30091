"""By-value code keeps its file name, line numbers and source lines in tracebacks."""

from __future__ import annotations

import textwrap
from pathlib import Path

from _helpers import run_python

ENV_SOURCE = textwrap.dedent('''
    import gymnasium
    from gymnasium.envs.classic_control import CartPoleEnv


    class Bad(CartPoleEnv):
        def step(self, action):
            self.helper()
            return super().step(action)

        def helper(self):
            return 1 / 0  # the line a traceback must show
''')

CAPTURE = textwrap.dedent('''
    import importlib.util, pickle, sys
    spec = importlib.util.spec_from_file_location("badenv", sys.argv[1])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["badenv"] = mod
    spec.loader.exec_module(mod)
    import specpack
    pack = specpack.capture(mod.Bad)
    assert pack.entry_point.by_value
    open(sys.argv[2], "wb").write(pickle.dumps(pack))
''')

# As a worker reports a failure (multiprocessing, make_vec, verify): Python's traceback module,
# which reads source lines through linecache. (The interpreter's own last-resort printer reads
# files from disk only.)
REBUILD = ("import pickle, sys, traceback\n"
           "p = pickle.load(open(sys.argv[1], 'rb'))\n"
           "try:\n"
           "    e = p.make(); e.reset(seed=0); e.step(0)\n"
           "except ZeroDivisionError:\n"
           "    traceback.print_exc(); sys.exit(3)\n")


def test_traceback_of_by_value_code_names_the_original_file_line_and_source(tmp_path: Path):
    src = tmp_path / "envs" / "badenv.py"
    src.parent.mkdir()
    src.write_text(ENV_SOURCE)
    blob = tmp_path / "pack.pkl"
    made = run_python(["-c", CAPTURE, str(src), str(blob)], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    src.unlink()  # the worker has no copy of the file: the pack carries its text
    other = tmp_path / "elsewhere"
    other.mkdir()
    out = run_python(["-c", REBUILD, str(blob)], cwd=other)
    assert out.returncode == 3, out.stderr
    assert f'File "{src}", line 12, in helper' in out.stderr, out.stderr
    assert "return 1 / 0  # the line a traceback must show" in out.stderr
    assert "<dynamic-code>" not in out.stderr


NESTED_SOURCE = textwrap.dedent('''
    from gymnasium.envs.classic_control import CartPoleEnv


    class Bad(CartPoleEnv):
        class Physics:
            @property
            def gravity(self):
                return 1 / 0  # the property of a nested class

        @staticmethod
        def physics():
            return Bad.Physics().gravity  # the static method

        @classmethod
        def constants(cls):
            return cls.physics()  # the class method

        def step(self, action):
            self.constants()
            return super().step(action)
''')


def test_traceback_through_static_class_methods_and_a_nested_property_shows_each_source(
    tmp_path: Path,
) -> None:
    src = tmp_path / "envs" / "nestedenv.py"
    src.parent.mkdir()
    src.write_text(NESTED_SOURCE)
    blob = tmp_path / "pack.pkl"
    made = run_python(["-c", CAPTURE, str(src), str(blob)], cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    src.unlink()
    out = run_python(["-c", REBUILD, str(blob)], cwd=tmp_path)
    assert out.returncode == 3, out.stderr
    for line, function, text in ((20, "step", "self.constants()"),
                                 (17, "constants", "return cls.physics()  # the class method"),
                                 (13, "physics", "return Bad.Physics().gravity  # the static"),
                                 (9, "gravity", "return 1 / 0  # the property of a nested")):
        assert f'File "{src}", line {line}, in {function}' in out.stderr, out.stderr
        assert text in out.stderr, out.stderr
