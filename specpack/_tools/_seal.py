"""A pack that carries its own proof: :func:`specpack.seal` keeps the digests of a rollout made
in a fresh interpreter, :func:`specpack.check` compares a rebuild anywhere with them. The
:class:`Seal` value lives in :mod:`specpack._core._sealed`: a worker never loads this module.
"""

from __future__ import annotations

import itertools
import os
import pickle
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .._core._errors import BuildError, SpecPackError
from .._core._keywords import checked_keywords
from .._core._process.launch import BOUNDARIES, fork_available
from .._core._process.protocol import Outcome
from .._core._process.thread import ThreadWorker
from .._core._process.worker import Worker, label
from .._core._sealed import Seal
from ._verify.compare import error_text
from ._verify.engine import check_ignore_info, check_pack, check_rollout_options
from ._verify.jobs import STASH
from ._verify.judge import REBUILD_HASH_SEED, failure, seeded_env, this_process_seed
from ._verify.report import (
    IDENTICAL,
    NOT_COMPARED,
    NOT_IDENTICAL,
    REBUILD_ERROR,
    ROLLOUT_ERROR,
    TIMEOUT,
    CheckReport,
    versions_text,
)
from ._verify.sealing import FIELDS, NO_DIGEST, PICKLE_JOB, event_fields, first_divergence

if TYPE_CHECKING:
    from .._core._pack import SpecPack

__all__ = ["CheckReport", "Seal", "check", "check_seal", "make_seal", "seal"]

#: Where :func:`check_seal` may rebuild: this process (in a thread), or a worker.
CHECK_WHERE = ("here", *BOUNDARIES)
_HASH_KEY = "PYTHONHASHSEED"
_TOKENS = itertools.count()
#: The jobs the worker runs: a seal's also names the distributions the build loaded.
SEAL_JOB = "specpack._tools._verify.seal_job:rollout_and_loaded"
CHECK_JOB = "specpack._tools._verify.sealing:rollout_digests"


@checked_keywords
def seal(pack: SpecPack, steps: int = 100, seed: int = 0, *, timeout: float = 120.0,
         ignore_info: Iterable[str] = ()) -> SpecPack:
    """A copy of ``pack`` (same fingerprint) holding its own proof in ``sealed``: the per-step
    digests of a seeded rollout made in a fresh interpreter, which :func:`specpack.check`
    compares a rebuild with anywhere later (docs/another-machine.md).

    Parameters
    ----------
    pack
        The pack to seal (a :class:`~specpack.SpecPack`; ``pack`` itself is not changed).
    steps, seed
        The seeded rollout recorded (the same actions on every later check).
    timeout
        Seconds for the reference rollout.
    ignore_info
        ``info`` keys left out of the seal, and so of every check (wall-clock times).

    Returns
    -------
    SpecPack
        ``pack`` with ``sealed`` set: dump it, and check it where it is loaded.

    Raises
    ------
    ArgumentTypeError
        ``pack`` is not a :class:`~specpack.SpecPack` (an id, a class, a live env: capture it
        first, ``specpack.seal(specpack.capture("CartPole-v1"))``).
    BuildError
        The pack could not be built, or its interpreter died or timed out.
    SpecPackError
        Bad options; or the rollout raised, or returned a value with no exact encoding.
    """
    check_pack(pack, "specpack.seal")
    return pack.evolve(sealed=make_seal(pack, steps=steps, seed=seed, timeout=timeout,
                                        ignore_info=ignore_info))


@checked_keywords
def check(pack: SpecPack, *, where: str | None = None, timeout: float = 120.0) -> CheckReport:
    """Rebuild ``pack`` and compare it with the rollout recorded where it was sealed
    (:func:`specpack.seal`); the report is truthy only when identical, else names the first
    differing step and field.

    Parameters
    ----------
    pack
        A sealed :class:`~specpack.SpecPack` (``specpack.seal(pack)``, or a pack file written
        from one).
    where
        Where the rebuild runs: ``"subprocess"`` (the default: a fresh interpreter of this
        machine under the seal's ``PYTHONHASHSEED``; this process runs none of the env's code),
        ``"here"`` (a thread of this process: it sees this process's state), ``"spawn"`` or
        ``"forkserver"``.
    timeout
        Seconds for the rebuild and rollout.

    Returns
    -------
    CheckReport
        Truthy only when the layers, spaces and every digest of the rollout match.

    Raises
    ------
    ArgumentTypeError
        ``pack`` is not a :class:`~specpack.SpecPack`.
    SpecPackError
        The pack holds no seal: make one with ``specpack.seal(pack)``.
    """
    check_pack(pack, "specpack.check")
    sealed = pack.sealed
    if sealed is None:
        raise SpecPackError(
            f"pack {pack.label} holds no seal to check against; seal it where it was "
            "captured with sealed = specpack.seal(pack, steps=100, seed=0) and check that pack")
    return check_seal(pack, sealed, where="subprocess" if where is None else where,
                      timeout=timeout)


def make_seal(pack: Any, *, steps: int = 100, seed: int = 0, timeout: float = 120.0,
              ignore_info: Iterable[str] = ()) -> Seal:
    """Roll ``pack`` out in a fresh interpreter and seal it (raises as :func:`specpack.seal`)."""
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
    shapes = {"events": list, "layers": list, "spaces": str, "nondeterministic": bool,
              "not_comparable": list, "versions": dict}
    ok = (type(v) is dict and all(type(v.get(k)) is t for k, t in shapes.items())
          and all(type(e) is list and e and all(type(x) is str for x in e)
                  and len(e) == 1 + len(event_fields(e[0])) for e in v["events"])
          and all(type(x) is str for x in v["layers"] + v["not_comparable"])
          and all(type(names) is dict  # str -> str mappings
                  and all(type(k) is str and type(x) is str for k, x in names.items())
                  for names in (v["versions"], v.get("loaded", {})))
          and (v.get("error") is None or type(v["error"]) is dict))
    return v if ok else None


def _roll(pack: Any, where: str, hash_seed: int, steps: int, seed: int,
          ignore_info: Iterable[str], deadline: float, loaded: Iterable[str], *,
          record: bool = False) -> Outcome:
    """Run the sealing job on ``pack`` in a worker of ``where`` (``"here"``: a thread); with
    ``record``, the job also names the distributions the worker loaded."""
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
