"""A pack that carries its own proof: :func:`make_seal` and :func:`check_seal`.

:func:`make_seal` keeps the digests of a rollout made in a fresh interpreter; :func:`check_seal`
rebuilds the pack anywhere later, rolls out the same actions under the seal's seed and hash
seed, and names the first step and field that differ. The :class:`Seal` value itself lives in
:mod:`specpack._core._sealed`, so a worker building a sealed pack never loads this module.
"""

from __future__ import annotations

import itertools
import os
import pickle
import time
from collections.abc import Iterable, Mapping
from typing import Any

from .._core._errors import BuildError, SpecPackError
from .._core._process import BOUNDARIES, Outcome, ThreadWorker, Worker, fork_available, label
from .._core._sealed import Seal
from ._verify.check_report import CheckReport, versions_text
from ._verify.compare import error_text
from ._verify.engine import check_ignore_info, check_rollout_options
from ._verify.jobs import STASH
from ._verify.judge import REBUILD_HASH_SEED, failure, seeded_env, this_process_seed
from ._verify.report import (
    IDENTICAL,
    NOT_COMPARED,
    NOT_IDENTICAL,
    REBUILD_ERROR,
    ROLLOUT_ERROR,
    TIMEOUT,
)
from ._verify.sealing import FIELDS, NO_DIGEST, PICKLE_JOB, event_fields, first_divergence

__all__ = ["CheckReport", "Seal", "check_seal", "make_seal"]

#: Where :func:`check_seal` may rebuild: this process (in a thread), or a worker.
CHECK_WHERE = ("here", *BOUNDARIES)
_HASH_KEY = "PYTHONHASHSEED"
_TOKENS = itertools.count()
#: The jobs the worker runs: a seal's also names the distributions the build loaded.
SEAL_JOB = "specpack._tools._verify.seal_job:rollout_and_loaded"
CHECK_JOB = "specpack._tools._verify.sealing:rollout_digests"


def make_seal(pack: Any, *, steps: int = 100, seed: int = 0, timeout: float = 120.0,
              ignore_info: Iterable[str] = ()) -> Seal:
    """Roll ``pack`` out in a fresh interpreter and seal what it did (see
    :func:`specpack.seal`, which raises as this does)."""
    check_rollout_options(steps, seed, "subprocess", timeout)
    ignored = check_ignore_info(ignore_info)
    hash_seed = this_process_seed()
    hash_seed = REBUILD_HASH_SEED if hash_seed is None else hash_seed
    what = getattr(pack, "label", "the pack")
    o = _roll(pack, "subprocess", hash_seed, steps, seed, ignored, time.monotonic() + timeout,
              (), record=True)
    if o.status == "timeout":
        raise BuildError(f"cannot seal {what}: its rollout in a fresh interpreter did not "
                         f"finish within {timeout:g} s (pass a larger timeout=, or fewer steps=)")
    if o.status != "ok":
        raise BuildError(f"cannot seal {what}: {failure(o, label('subprocess'))}")
    got = _answer(o)
    if got is None:
        raise BuildError(f"cannot seal {what}: the fresh interpreter sent an unreadable answer")
    error = got["error"]
    if error is not None:
        fewer = max(_step_of(error) - 1, 0)
        raise SpecPackError(
            f"cannot seal {what}: its rollout raised {error_text(error)}; a seal proves a "
            f"complete rollout: fix the env, or seal fewer steps (steps={fewer})")
    if got["not_comparable"]:
        raise SpecPackError(
            f"cannot seal {what}: values with no exact encoding (a check could never compare "
            f"them): {'; '.join(got['not_comparable'])}; leave varying info keys out with "
            "ignore_info=[...]")
    odd = [e[0] for e in got["events"] if NO_DIGEST in e]
    if odd or got["spaces"] == NO_DIGEST:
        raise SpecPackError(f"cannot seal {what}: values that cannot be digested "
                            f"({', '.join(odd[:3]) or 'the spaces'})")
    made_with = {**got["versions"], _HASH_KEY: str(hash_seed)}
    return Seal(steps=steps, seed=seed, fields=FIELDS, digests=got["events"],
                layers=got["layers"], spaces=got["spaces"], made_with=made_with,
                ignore_info=ignored, loaded=tuple(sorted(got.get("loaded", ()))))


def check_seal(pack: Any, seal: Seal, *, where: str = "subprocess",
               timeout: float = 120.0) -> CheckReport:
    """Rebuild ``pack`` and compare its rollout with ``seal`` (see :func:`specpack.check`; a
    thread ``"here"`` still running at the timeout is abandoned)."""
    if not isinstance(seal, Seal):
        raise SpecPackError(f"seal is a {type(seal).__name__}, not a Seal: make one with "
                            "make_seal(pack) (or specpack.seal(pack)) and pass it")
    if where not in CHECK_WHERE:
        raise SpecPackError(f"where={where!r} is not one of {', '.join(CHECK_WHERE)}")
    check_rollout_options(seal.steps, seal.seed, "subprocess", timeout)
    start = time.monotonic()
    recorded = seal.made_with.get(_HASH_KEY, "")
    valid = recorded.isascii() and recorded.isdigit() and int(recorded) < 1 << 32
    hash_seed = int(recorded) if valid else REBUILD_HASH_SEED
    o = _roll(pack, where, hash_seed, seal.steps, seal.seed, seal.ignore_info,
              start + timeout, seal.loaded)
    side = "this process" if where == "here" else f"a {label(where)}"
    report = CheckReport(status=REBUILD_ERROR, differences=[], where=where, steps=seal.steps,
                         seed=seal.seed, sealed_with=dict(seal.made_with),
                         stdout=o.stdout, stderr=o.stderr)
    if o.status == "timeout":
        report.status = TIMEOUT
        report.differences = [f"the rebuild in {side} did not finish within {timeout:g} s"]
    elif o.status != "ok":
        report.differences = [failure(o, side)]
    else:
        got = _answer(o)
        if got is None:
            report.differences = [f"the rebuild in {side} sent an unreadable answer"]
        else:
            _judge(report, seal, got, bool(getattr(pack, "nondeterministic", False)))
    if where == "here" and this_process_seed() != hash_seed:
        report.notes.append(f"this process's PYTHONHASHSEED is not the seal's ({hash_seed}): "
                            "an env that depends on hash order may differ for that reason")
    report.elapsed = time.monotonic() - start
    return report


def _judge(report: CheckReport, seal: Seal, got: dict[str, Any], nondeterministic: bool) -> None:
    """Fill ``report`` from the rebuild's digests ``got``."""
    report.checked_with = dict(got["versions"])
    if seal.ignore_info:
        report.notes.append(f"info keys left out: {', '.join(map(repr, seal.ignore_info))}")
    found = report.differences
    if got["layers"] != list(seal.layers):
        found.append(f"layers differ: sealed {list(seal.layers)} vs rebuilt {got['layers']}")
    if got["spaces"] != seal.spaces:
        found.append("the spaces (observation_space, action_space before or after reset) "
                     "differ from the seal's")
    why = None
    if nondeterministic or got["nondeterministic"]:
        why = "rollout not compared: the spec says nondeterministic=True"
    elif got["not_comparable"]:
        why = ("rollout not compared: values with no exact encoding: "
               + "; ".join(got["not_comparable"]))
    elif tuple(seal.fields) != FIELDS:
        why = f"rollout not compared: the seal holds fields {list(seal.fields)}, not {list(FIELDS)}"
    if why is not None:
        report.notes.insert(0, why)
        report.status = NOT_IDENTICAL if found else NOT_COMPARED
        return
    report.rollout_compared = True
    div = first_divergence(seal.digests, got["events"])
    error = got["error"]
    if div is not None and not (error is not None and div[1] == "length"):
        report.step, report.field, line = div
        found.insert(0, f"{line} ({versions_text(seal.made_with, report.checked_with)})")
    if error is not None:
        found.append(f"the rollout raised {error_text(error)} (the seal's rollout did not)")
        if report.step is None:
            report.step, report.field = _step_of(error), "error"
        report.status = ROLLOUT_ERROR
        return
    report.status = NOT_IDENTICAL if found else IDENTICAL


def _step_of(error: Mapping[str, Any]) -> int:
    """The step a rollout error names (0 if it names none)."""
    step = error.get("step")
    return step if type(step) is int else 0


def _answer(o: Outcome) -> dict[str, Any] | None:
    """The rebuild's answer, its shape checked (a hostile child sends data only), or None."""
    v = o.value
    if type(v) is not dict:
        return None
    shapes = {"events": list, "layers": list, "spaces": str, "nondeterministic": bool,
              "not_comparable": list, "versions": dict}
    if any(type(v.get(k)) is not t for k, t in shapes.items()):
        return None
    if not all(type(e) is list and e and all(type(x) is str for x in e)
               and len(e) == 1 + len(event_fields(e[0])) for e in v["events"]):
        return None
    if not all(type(x) is str for x in v["layers"] + v["not_comparable"]):
        return None
    for names in (v["versions"], v.get("loaded", {})):  # str -> str mappings
        if type(names) is not dict or not all(type(k) is str and type(x) is str
                                              for k, x in names.items()):
            return None
    if v.get("error") is not None and type(v["error"]) is not dict:
        return None
    return v


def _roll(pack: Any, where: str, hash_seed: int, steps: int, seed: int,
          ignore_info: Iterable[str], deadline: float, loaded: Iterable[str], *,
          record: bool = False) -> Outcome:
    """Run the sealing job on ``pack`` in a worker of ``where`` (``"here"``: a thread),
    reporting the versions of the pack's ``requires`` and ``loaded``; with ``record``, also
    the distributions the worker loaded."""
    got = _payload(pack, deadline)
    if isinstance(got, Outcome):
        return got
    params = {"steps": steps, "seed": seed, "ignore_info": list(ignore_info),
              "backend": str(getattr(pack, "backend", "gymnasium")),
              "names": sorted({*map(str, getattr(pack, "requires", None) or {}),
                               *loaded})}
    env = seeded_env(hash_seed) if where == "subprocess" else None
    worker = ThreadWorker() if where == "here" else Worker(where, env=env)  # type: ignore[arg-type]
    with worker:
        worker.submit(SEAL_JOB if record else CHECK_JOB, got, params)
        return worker.collect(timeout=max(deadline - time.monotonic(), 0.0))


def _payload(pack: Any, deadline: float) -> bytes | Outcome:
    """``pickle.dumps(pack)``, made in a fork where there is one (pickling a pack's recorded
    spaces runs the env's code); the fork's outcome if that failed."""
    if not fork_available():
        return pickle.dumps(pack, protocol=pickle.HIGHEST_PROTOCOL)
    token = f"seal.{os.getpid()}.{next(_TOKENS)}"
    STASH[token] = pack
    try:
        with Worker("fork") as fork:
            fork.submit(PICKLE_JOB, b"", {"token": token})
            o = fork.collect(timeout=max(deadline - time.monotonic(), 0.0))
    finally:
        STASH.pop(token, None)
    payload = o.value.get("payload") if type(o.value) is dict else None
    return payload if o.status == "ok" and type(payload) is bytes else o
