"""A capture after the env's module was edited and reloaded carries the class as it is now."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

from _helpers import run_python

MODULE = '''
import gymnasium
import numpy as np


class Env(gymnasium.Env):
    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (1,), np.float64)
    action_space = gymnasium.spaces.Discrete(2)
    VERSION = {version}
'''

# In a fresh interpreter: the module is importable by name (on PYTHONPATH), so the capture
# carries it by reference; then the file is edited and the module reloaded, as in a notebook.
SCRIPT = textwrap.dedent('''
    import importlib, json, pickle, sys
    from pathlib import Path
    import gymnasium
    import specpack
    import reloaded_envs

    gymnasium.register("Reloaded-v0", entry_point="reloaded_envs:Env")
    before = specpack.capture("Reloaded-v0")
    out = {"by_value": before.entry_point.by_value,
           "before": before.make().unwrapped.VERSION}
    path = Path(reloaded_envs.__file__)
    path.write_text(path.read_text().replace("VERSION = 1", "VERSION = 22222"))
    importlib.reload(reloaded_envs)
    after = specpack.capture("Reloaded-v0")
    out["gymnasium_make"] = gymnasium.make("Reloaded-v0").unwrapped.VERSION
    out["unpickled"] = pickle.loads(pickle.dumps(after)).make().unwrapped.VERSION
    out["made_here"] = after.make().unwrapped.VERSION
    print(json.dumps(out))
''')


def test_capture_after_importlib_reload_builds_the_reloaded_class(tmp_path: Path) -> None:
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "reloaded_envs.py").write_text(MODULE.format(version=1))
    proc = run_python(
        ["-B", "-c", SCRIPT], cwd=tmp_path,
        env={"PYTHONPATH": os.pathsep.join(filter(None, [str(mods),
                                                          os.environ.get("PYTHONPATH")]))})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["by_value"] is False and out["before"] == 1
    assert out["gymnasium_make"] == 22222
    # A worker unpickling the pack imports the module as it is now ...
    assert out["unpickled"] == 22222
    # ... and the pack built here must be the same env (not the class from before the reload).
    assert out["made_here"] == 22222, out
