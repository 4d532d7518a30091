"""Proving a rebuild is identical: the comparison engine, ``diff`` and ``verify``.

A *trace* is what an env shows from outside: its observation and action spaces, the wrapper
layers from outside in, ``render_mode``, the ``spec`` fields that shape it, and a seeded
rollout (``reset(seed=s)``, actions sampled from the action space seeded with ``s``, auto-reset
on termination or truncation). Two envs are identical when their traces are; comparison stops
at the first divergence and names the step and the values.

``verify`` builds the reference here with ``pack.make()`` and the rebuild in a *fresh*
interpreter (``sys.executable`` in a temporary working directory with the caller's environment
variables, ``PYTHONPATH`` included), or in a spawn/forkserver child. The child starts first and
the local trace is computed while it boots, so verify costs little more than one interpreter
start.
"""

from __future__ import annotations

import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import NotIdenticalError, SpecPackError
from .report import VerifyReport

if TYPE_CHECKING:
    from ..pack import SpecPack

__all__ = ["Trace", "compare", "diff", "trace", "verify", "verify_pack"]

WHERE = ("subprocess", "spawn", "forkserver")


@dataclass
class Trace:
    """What an env shows from outside, recorded over a seeded rollout."""

    layers: list[str]
    observation_space: Any
    action_space: Any
    render_mode: Any
    spec: dict[str, Any]
    nondeterministic: bool
    events: list[tuple[Any, ...]] = field(default_factory=list)
    error: str | None = None


# -- tracing ----------------------------------------------------------------------------------


def _layer_names(env: Any) -> list[str]:
    names = []
    node = env
    for _ in range(1000):
        cls = type(node)
        names.append(f"{cls.__module__}.{cls.__qualname__}")
        inner = getattr(node, "env", None)
        if inner is None or inner is node or not hasattr(node, "unwrapped"):
            break
        if node is getattr(node, "unwrapped", node):
            break
        node = inner
    return names


def _spec_fields(env: Any) -> dict[str, Any]:
    spec = getattr(env, "spec", None)
    if spec is None:
        return {}
    out: dict[str, Any] = {}
    for name in ("id", "reward_threshold", "nondeterministic", "max_episode_steps"):
        out[name] = getattr(spec, name, None)
    kwargs = getattr(spec, "kwargs", None) or {}
    out["kwargs"] = {k: _portable_view(v) for k, v in sorted(kwargs.items())}
    return out


def _portable_view(v: Any) -> Any:
    """A comparable stand-in for a kwarg value (callables by name, arrays by content)."""
    if callable(v) and not isinstance(v, type):
        return f"<callable {getattr(v, '__qualname__', type(v).__qualname__)}>"
    if isinstance(v, type):
        return f"<class {v.__qualname__}>"
    if isinstance(v, np.ndarray):
        return ("ndarray", v.dtype.str, v.shape, v.tobytes())
    try:
        pickle.dumps(v)
    except Exception:  # noqa: BLE001
        return repr(type(v))
    return v


def trace(env: Any, steps: int = 100, seed: int = 0) -> Trace:
    """Record ``env``'s trace (this runs a rollout on it: it changes the env's state)."""
    spec_fields = _spec_fields(env)
    t = Trace(
        layers=_layer_names(env),
        observation_space=env.observation_space,
        action_space=env.action_space,
        render_mode=getattr(env, "render_mode", None),
        spec=spec_fields,
        nondeterministic=bool(spec_fields.get("nondeterministic", False)),
    )
    try:
        obs, _info = env.reset(seed=seed)
        t.events.append(("reset", 0, obs))
        env.action_space.seed(seed)
        for i in range(1, steps + 1):
            action = env.action_space.sample()
            obs, reward, terminated, truncated, info = env.step(action)
            t.events.append(("step", i, action, obs, reward, bool(terminated), bool(truncated),
                             sorted(map(str, info))))
            if terminated or truncated:
                obs, _info = env.reset()
                t.events.append(("reset", i, obs))
    except Exception as e:  # noqa: BLE001 - a failing rollout is part of the trace
        t.error = f"{type(e).__name__}: {e}"
    return t


# -- comparing --------------------------------------------------------------------------------


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        if a_arr.dtype != b_arr.dtype or a_arr.shape != b_arr.shape:
            return False
        try:
            return bool(np.array_equal(a_arr, b_arr, equal_nan=a_arr.dtype.kind in "fc"))
        except TypeError:
            return bool(np.array_equal(a_arr, b_arr))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return repr(a) == repr(b)


def _show(v: Any) -> str:
    if isinstance(v, np.ndarray):
        text = np.array2string(v, precision=8, threshold=12)
        return f"{text} ({v.dtype})"
    r = repr(v)
    return r if len(r) <= 160 else r[:157] + "..."


def compare(a: Trace, b: Trace, *, labels: tuple[str, str] = ("a", "b")) -> list[str]:
    """What differs between two traces; the rollout stops at its first divergence."""
    la, lb = labels
    out: list[str] = []
    if a.error is None and b.error is not None:
        out.append(f"{lb} failed during the rollout: {b.error}")
    elif b.error is None and a.error is not None:
        out.append(f"{la} failed during the rollout: {a.error}")
    if a.layers != b.layers:
        out.append(f"layers differ: {la} {a.layers} vs {lb} {b.layers}")
    for name in ("observation_space", "action_space"):
        va, vb = getattr(a, name), getattr(b, name)
        if not _space_equal(va, vb):
            out.append(f"{name} differs: {la} {va!r} vs {lb} {vb!r}")
    if a.render_mode != b.render_mode:
        out.append(f"render_mode differs: {la} {a.render_mode!r} vs {lb} {b.render_mode!r}")
    for key in sorted(set(a.spec) | set(b.spec)):
        va, vb = a.spec.get(key), b.spec.get(key)
        if not _equal(va, vb):
            out.append(f"spec.{key} differs: {la} {_show(va)} vs {lb} {_show(vb)}")
    if a.nondeterministic or b.nondeterministic:
        return out
    out.extend(_compare_events(a.events, b.events, la, lb))
    return out


def _space_equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return repr(a) == repr(b)


_STEP_FIELDS = ("action", "observation", "reward", "terminated", "truncated", "info keys")


def _compare_events(ea: list[tuple[Any, ...]], eb: list[tuple[Any, ...]], la: str,
                    lb: str) -> list[str]:
    for x, y in zip(ea, eb):
        if x[0] != y[0]:
            return [f"step {x[1]}: {la} did {x[0]} but {lb} did {y[0]}"]
        if x[0] == "reset":
            if not _equal(x[2], y[2]):
                return [f"step {x[1]}: reset observation differs: {la} {_show(x[2])} vs "
                        f"{lb} {_show(y[2])}"]
            continue
        for name, va, vb in zip(_STEP_FIELDS, x[2:], y[2:]):
            if not _equal(va, vb):
                return [f"step {x[1]}: {name} differs: {la} {_show(va)} vs {lb} {_show(vb)}"]
    if len(ea) != len(eb):
        return [f"rollout length differs: {la} {len(ea)} events vs {lb} {len(eb)}"]
    return []


def diff(env_a: Any, env_b: Any, steps: int = 100, seed: int = 0) -> list[str]:
    """Compare two envs by their traces; ``[]`` means identical.

    Both envs are reset and stepped (their state changes). Example::

        assert specpack.diff(pack.make(), gymnasium.make("CartPole-v1"), steps=50) == []
    """
    return compare(trace(env_a, steps, seed), trace(env_b, steps, seed))


# -- verify -----------------------------------------------------------------------------------


def _run_subprocess(blob: bytes, steps: int, seed: int, timeout: float) -> tuple[Any, Any]:
    cwd = tempfile.mkdtemp(prefix="specpack-verify-")
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from specpack._process.worker import main; main()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=cwd, env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(pickle.dumps((blob, steps, seed), protocol=pickle.HIGHEST_PROTOCOL))
    proc.stdin.close()
    proc.stdin = None
    return proc, cwd


def _collect_subprocess(handle: tuple[Any, Any], timeout: float) -> dict[str, Any]:
    proc, cwd = handle
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"error": f"the fresh interpreter did not finish within {timeout:g} s"}
    finally:
        try:
            os.rmdir(cwd)
        except OSError:
            pass
    if proc.returncode != 0 or not out:
        tail = err.decode("utf-8", "replace")[-4000:]
        return {"error": f"the fresh interpreter exited with code {proc.returncode}:\n{tail}"}
    try:
        result: dict[str, Any] = pickle.loads(out)
    except Exception as e:  # noqa: BLE001
        return {"error": f"unreadable result from the fresh interpreter ({e})"}
    return result


def _run_mp(where: str, blob: bytes, steps: int, seed: int) -> tuple[Any, Any]:
    import multiprocessing as mp

    from .._process.worker import run_in_child

    ctx: Any = mp.get_context(where)
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=run_in_child, args=(child, blob, steps, seed), daemon=True)
    proc.start()
    child.close()
    return proc, parent


def _collect_mp(handle: tuple[Any, Any], timeout: float) -> dict[str, Any]:
    proc, conn = handle
    try:
        if not conn.poll(timeout):
            proc.kill()
            return {"error": f"the {proc.name} child did not answer within {timeout:g} s"}
        result: dict[str, Any] = pickle.loads(conn.recv_bytes())
        return result
    except EOFError:
        proc.join(5)
        return {"error": f"the child process died (exit code {proc.exitcode}) before answering"}
    finally:
        conn.close()
        proc.join(5)


def verify(
    pack: SpecPack,
    *,
    steps: int = 100,
    seed: int = 0,
    where: str = "subprocess",
    check: bool = False,
    timeout: float = 120.0,
) -> VerifyReport:
    """Rebuild ``pack`` in a fresh interpreter (or a spawn/forkserver child) and compare it with
    a rebuild here: spaces, wrapper layers, ``render_mode``, spec fields and a seeded rollout.

    The same as ``pack.verify(...)``. Returns a :class:`VerifyReport` (truthy iff identical);
    with ``check=True`` raises :class:`~specpack.errors.NotIdenticalError` instead.
    """
    return verify_pack(pack, steps=steps, seed=seed, where=where, check=check, timeout=timeout)


def verify_pack(
    pack: SpecPack,
    steps: int = 100,
    seed: int = 0,
    where: str = "subprocess",
    check: bool = False,
    timeout: float = 120.0,
) -> VerifyReport:
    """Rebuild ``pack`` in a fresh interpreter (or a spawn/forkserver child) and compare.

    Returns a :class:`VerifyReport`; with ``check=True`` raises
    :class:`~specpack.errors.NotIdenticalError` listing the differences instead.
    """
    if where not in WHERE:
        raise SpecPackError(f"where={where!r} is not one of {', '.join(WHERE)}")
    if not isinstance(steps, int) or steps < 0:
        raise SpecPackError(f"steps={steps!r} must be a non-negative int")
    start = time.perf_counter()
    blob = pickle.dumps(pack, protocol=pickle.HIGHEST_PROTOCOL)
    if where == "subprocess":
        handle = _run_subprocess(blob, steps, seed, timeout)
    else:
        handle = _run_mp(where, blob, steps, seed)
    try:
        local = trace(pack.make(), steps, seed)
    except Exception:
        # Do not leave the child running when the local build fails.
        _stop(handle)
        raise
    if where == "subprocess":
        result = _collect_subprocess(handle, timeout)
    else:
        result = _collect_mp(handle, timeout)
    differences: list[str] = []
    notes: list[str] = []
    labels = ("here", where if where != "subprocess" else "fresh interpreter")
    if "error" in result:
        differences.append(f"rebuild failed in the {labels[1]}: {result['error']}")
    else:
        remote: Trace = result["trace"]
        differences = compare(local, remote, labels=labels)
    rollout = not (pack.nondeterministic or local.nondeterministic)
    if not rollout:
        notes.append("rollout not compared: the spec says nondeterministic=True")
    report = VerifyReport(
        identical=not differences,
        differences=differences,
        where=where,
        steps=steps,
        seed=seed,
        rollout_compared=rollout,
        elapsed=time.perf_counter() - start,
        notes=notes,
    )
    if check and not report:
        raise NotIdenticalError(
            f"pack {pack.label} rebuilt in a {labels[1]} is not identical: "
            + "; ".join(differences),
            differences,
        )
    return report


def _stop(handle: tuple[Any, Any]) -> None:
    proc = handle[0]
    try:
        proc.kill()
    except Exception:  # noqa: BLE001
        pass


def format_exception(e: BaseException) -> str:
    """The full traceback text of ``e`` (what a child sends back)."""
    return "".join(traceback.format_exception(type(e), e, e.__traceback__))
