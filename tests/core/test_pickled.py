"""Every global a new pickle of a specpack value names is in ``specpack._pickled``.

The rebuilders are defined next to their classes (imports point down) and labelled
``specpack._pickled.<name>``; ``import specpack`` loads that module (which imports nothing
itself), so cloudpickle, which carries by value a function whose module is not in
``sys.modules``, names them by reference as ``pickle`` does (Ray and SB3 ship packs with
cloudpickle).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _helpers import run_python

import specpack
from specpack import _pickled

CLOUDPICKLE_A_PACK = """
import json, pickle, pickletools, sys
import cloudpickle
import specpack

pack = specpack.capture("CartPole-v1", record_spaces=True)
data = cloudpickle.dumps(pack)
strings = [arg for op, arg, _ in pickletools.genops(data) if isinstance(arg, str)]
print(json.dumps({"strings": strings, "same": pickle.loads(data) == pack,
                  "pickled": sorted(m for m in sys.modules if m.startswith("specpack._pickled"))}))
"""


def test_cloudpickle_of_a_pack_in_a_fresh_interpreter_names_the_rebuilders_by_reference(
        tmp_path: Path) -> None:
    proc = run_python(["-c", CLOUDPICKLE_A_PACK], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.splitlines()[-1])
    assert seen["same"]
    assert "specpack._pickled" in seen["strings"]
    assert "restore_pack" in seen["strings"] and "restore_surface" in seen["strings"]
    # carried by value, the function would bring its code and its module's globals
    assert "from_state" not in seen["strings"] and "specpack._core._pack" not in seen["strings"]


def test_each_rebuilder_is_the_object_its_defining_module_holds_under_the_pickled_name() -> None:
    assert specpack.__version__  # the package (and with it specpack._pickled) is loaded
    for name in _pickled.__all__:
        function = getattr(_pickled, name)
        assert (function.__module__, function.__qualname__) == ("specpack._pickled", name)
        home = sys.modules[_pickled._HOMES[name].replace(".", "specpack.", 1)]
        assert getattr(home, name) is function, name
