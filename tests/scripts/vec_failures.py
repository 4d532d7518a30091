"""Workers that cannot build their env, under make_vec and plain AsyncVectorEnv (a script).

The env classes build in the parent (gymnasium makes one env there first) and fail only in a
worker: raising, dying without a word, hanging, or a module whose import fails in a worker.
Prints one JSON line; tests/core/vector/test_make_vec.py asserts on it.
"""

import json
import sys
import time

import gymnasium as gym
from vec_envs import HERE, load_by_path

import specpack


def attempt(fn):
    t0 = time.monotonic()
    try:
        venv = fn()
        venv.close()
        return {"outcome": "ok", "seconds": time.monotonic() - t0}
    except BaseException as e:  # noqa: BLE001
        return {
            "type": type(e).__name__,
            "is_specpack_error": isinstance(e, specpack.SpecPackError),
            "message": str(e),
            "child_traceback": getattr(e, "child_traceback", None),
            "seconds": time.monotonic() - t0,
        }


if __name__ == "__main__":
    mod = load_by_path()
    contexts = sys.argv[1].split(",") if len(sys.argv) > 1 else ["fork", "spawn", "forkserver"]
    fails = specpack.capture(mod.FailsInWorker, k=2.0)
    dies = specpack.capture(mod.DiesInWorker)
    hangs = specpack.capture(mod.HangsInWorker)
    # A module that imports fine here but raises on import in any worker, kept by reference
    # (tests/ is on sys.path here and in spawn/forkserver workers, which inherit sys.path).
    sys.path.insert(0, str(HERE))
    import vec_import_fails

    imports = specpack.capture(vec_import_fails.ImportFailsEnv, by_value=False)

    results = {"raises": {}, "control_raises": {}, "dies": {}, "hangs": {}, "import": {},
               "control_import": {}}
    for ctx in contexts:
        results["raises"][ctx] = attempt(lambda ctx=ctx: specpack.make_vec(fails, 2, context=ctx))
        results["control_raises"][ctx] = attempt(
            lambda ctx=ctx: gym.vector.AsyncVectorEnv([fails.make] * 2, context=ctx))
        results["dies"][ctx] = attempt(lambda ctx=ctx: specpack.make_vec(dies, 2, context=ctx))
        results["hangs"][ctx] = attempt(
            lambda ctx=ctx: specpack.make_vec(hangs, 2, context=ctx, start_timeout=1.5))
        if ctx != "fork":  # a fork worker inherits the imported module
            results["import"][ctx] = attempt(
                lambda ctx=ctx: specpack.make_vec(imports, 2, context=ctx))
            results["control_import"][ctx] = attempt(
                lambda ctx=ctx: gym.vector.AsyncVectorEnv([imports.make] * 2, context=ctx))
    print(json.dumps(results))
