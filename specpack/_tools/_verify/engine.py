"""Proving a rebuild is identical: ``verify`` (across a process boundary, judged by
:mod:`.judge`) and ``diff`` (two envs of this process)."""

from __future__ import annotations

import contextlib
import copy
import itertools
import math
import os
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..._core._errors import ArgumentTypeError, NotIdenticalError, SpecPackError
from ..._core._keywords import check_flag, checked_keywords
from ..._core._process import bare
from ..._core._process.launch import BOUNDARIES, FRESH, Boundary, fork_available
from ..._core._process.protocol import replay
from ..._core._process.thread import ThreadWorker
from ..._core._process.worker import Worker, label
from ..._core._text import short, suggest
from .compare import compare
from .jobs import STASH
from .judge import NO_CONTROL, Sides, Verdict, control_is_cheap, hash_seeds, judge, seeded_env
from .report import IDENTICAL, VerifyReport
from .trace import plan_actions, record

if TYPE_CHECKING:
    from ..._core._pack import SpecPack

__all__ = ["WHERE", "check_ignore_info", "check_pack", "check_rollout_options", "diff", "verify"]

WHERE = BOUNDARIES
_TOKENS = itertools.count()


def check_rollout_options(steps: Any, seed: Any, where: Any, timeout: Any) -> None:
    """Refuse, naming it, a ``steps``/``seed``/``where``/``timeout`` verify cannot use."""
    if where not in WHERE:
        raise SpecPackError(f"where={where!r} is not one of {', '.join(WHERE)};"
                            f"{suggest(str(where), WHERE) or ' use where=' + repr(WHERE[0])}")
    for name, value in (("steps", steps), ("seed", seed)):
        if type(value) is not int or value < 0:
            raise SpecPackError("", python=f"{name}={value!r} must be a non-negative int",
                                cli=f"--{name} {value!r} must be a non-negative integer")
    if (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
            or not math.isfinite(timeout) or timeout <= 0):
        must = "must be a positive number of seconds"
        raise SpecPackError("", python=f"timeout={timeout!r} {must}",
                            cli=f"--timeout {timeout!r} {must}")


def check_pack(pack: Any, what: str) -> None:
    """Refuse, naming :func:`specpack.capture`, a ``pack`` that is not a SpecPack (the pack
    module is loaded whenever a pack exists: when it is not, ``pack`` is none)."""
    cls = getattr(sys.modules.get("specpack._core._pack"), "SpecPack", None)
    if cls is not None and isinstance(pack, cls):
        return
    given = short(pack, 60) if isinstance(pack, str) else f"a {type(pack).__name__}"
    if isinstance(pack, str):
        example = repr(pack) if len(pack) <= 60 else "'<env id>'"
    elif isinstance(pack, type):
        example = pack.__qualname__
    else:
        example = "env" if callable(getattr(pack, "step", None)) else "..."
    raise ArgumentTypeError(
        f"{what} takes a SpecPack, got {given}; capture it first: "
        f"{what}(specpack.capture({example})), and use that pack wherever the env travels")


def check_ignore_info(ignore_info: Any) -> tuple[str, ...]:
    """The ``info`` keys to leave out, checked: an iterable of strings (not one string)."""
    if isinstance(ignore_info, (str, bytes)):
        raise SpecPackError(f"ignore_info={ignore_info!r} must be a list of info keys, not one "
                            f"string: use ignore_info=[{ignore_info!r}]")
    if not isinstance(ignore_info, Iterable):
        raise SpecPackError(f"ignore_info={ignore_info!r} must be a list of info keys (strings)")
    keys = list(ignore_info)
    for key in keys:
        if type(key) is not str:
            raise SpecPackError(f"ignore_info holds {key!r} ({type(key).__name__}); info keys "
                                "are strings: pass them as str")
    return tuple(dict.fromkeys(keys))


@checked_keywords
def verify(pack: SpecPack, *, steps: int = 100, seed: int = 0, where: Boundary = "subprocess",
           check: bool = False, timeout: float = 120.0,
           ignore_info: Iterable[str] = ()) -> VerifyReport:
    """Rebuild ``pack`` in another process and compare it with a build here.

    The rebuild runs in a worker of ``where``, the reference twice in a fork of this process,
    all at once with the same actions; a fresh interpreter's rebuild has a hash control under
    another ``PYTHONHASHSEED``. A ``not_identical`` is confirmed by a second rebuild.

    Parameters
    ----------
    pack
        The pack to prove.
    steps, seed
        The seeded rollout both sides run.
    where
        ``"subprocess"`` (a fresh ``python``, the default), ``"bare"`` (a fresh ``python``
        that sees only what an installed node would have: no ``PYTHONPATH``, no user site, an
        empty working directory, this process's own folders hidden; the report names what a
        bare node would lack), ``"spawn"`` or ``"forkserver"`` (their hash seed is not set by
        specpack, and there is no hash control).
    check
        Raise instead of returning a falsy report.
    timeout
        One deadline, in seconds, for the whole call (a child still running then is killed
        with its process group).
    ignore_info
        ``info`` keys left out of the comparison on every side (values that vary by nature,
        such as wall-clock times); the report lists them.

    Returns
    -------
    VerifyReport
        Truthy only when both rollouts completed, were compared and matched
        (``identical``); otherwise ``status`` is one of ``not_identical`` (confirmed by a
        second rebuild), ``not_reproducible``, ``unseeded`` (a global generator or hash
        order: ``cause`` says which, the first finding names it and the fix),
        ``not_compared`` (``nondeterministic=True``, or a value has no exact encoding),
        ``rollout_error``, ``rebuild_error``, ``timeout``.

    Raises
    ------
    NotIdenticalError
        With ``check=True``, when the report is falsy (``.differences`` lists why).
    ArgumentTypeError
        ``pack`` is not a :class:`~specpack.SpecPack` (capture it first,
        ``specpack.verify(specpack.capture("CartPole-v1"))``), or ``check`` is not a bool.
    SpecPackError
        Bad options.
    """
    check_pack(pack, "specpack.verify")
    check_flag(check, "check", "specpack.verify()")
    check_rollout_options(steps, seed, where, timeout)
    ignored = check_ignore_info(ignore_info)
    start = time.monotonic()
    nondeterministic = pack.nondeterministic
    cheap = control_is_cheap()
    seeds = hash_seeds(where, control=not nondeterministic and cheap)
    # a bare rebuild does not see the folders of the pack's files either
    hide = [os.path.dirname(str(a.path)) for a in getattr(pack, "assets", ())]

    def rebuild_worker() -> Worker:
        return Worker(where, env=seeded_env(seeds.get("rebuild")) if where in FRESH else None,
                      hide=hide)  # type: ignore[arg-type]  # checked above

    token = f"{os.getpid()}.{next(_TOKENS)}"
    with contextlib.ExitStack() as stack:
        remote = stack.enter_context(rebuild_worker())
        control = None
        if "control" in seeds:
            control = stack.enter_context(Worker(
                where, env=seeded_env(seeds["control"]), hide=hide))  # type: ignore[arg-type]
        stack.callback(STASH.pop, token, None)
        STASH[token] = pack  # the side here pickles it (see jobs.plan_here)
        local: Worker | ThreadWorker = Worker("fork") if fork_available() else ThreadWorker()
        stack.callback(local.close)
        sides = Sides(local, remote, control, seeds, again=rebuild_worker)
        v = judge(token, sides, {"steps": steps, "seed": seed, "ignore_info": list(ignored)},
                  nondeterministic=nondeterministic, deadline=start + timeout, timeout=timeout)
        if where == "bare":
            _bare_findings(v, remote)
    replay(sides.outcomes_here)
    if where in FRESH and not cheap and not nondeterministic:
        v.notes.append(NO_CONTROL)
    if isinstance(local, ThreadWorker):
        v.notes.append("the build here ran in a thread (this platform cannot fork)")
    out = v.outcome
    report = VerifyReport(
        status=v.status, identical=v.status == IDENTICAL, differences=v.differences,
        where=where, steps=steps, seed=seed, rollout_compared=v.rollout_compared,
        elapsed=time.monotonic() - start, notes=v.notes,
        stdout=out.stdout if out else "", stderr=out.stderr if out else "",
        ignore_info=list(ignored), hash_seeds=seeds, cause=v.cause,
    )
    if check and not report:
        raise NotIdenticalError(
            f"pack {pack.label} rebuilt in a {label(where)} is not identical "
            f"({v.status}): " + "; ".join(d.splitlines()[0] for d in v.differences if d),
            v.differences,
        )
    return report


def _bare_findings(v: Verdict, remote: Worker) -> None:
    """Put what a bare node would lack first among the findings; note what hid the folders."""
    report = bare.read_report(remote.child.report if remote.child is not None else None)
    out = v.outcome
    texts = [*v.differences, *((out.error, out.detail, out.stderr) if out else ())]
    v.differences[:0] = bare.lacking(texts, report)
    v.notes.append(bare.summary(report))


@checked_keywords
def diff(env_a: Any, env_b: Any, *, steps: int = 100, seed: int = 0) -> list[str]:
    """Compare two envs of this process by their traces; ``[]`` means identical.

    Both are reset and stepped with the same actions, planned from a seeded copy of ``env_a``'s
    action space. Two rollouts that raise the same exception at the same step are not a
    difference here (``verify`` reports a ``rollout_error``). Example::

        assert specpack.diff(pack.make(), gymnasium.make("CartPole-v1"), steps=50) == []

    Parameters
    ----------
    env_a, env_b
        The envs (``env_a`` is called ``a`` in the lines, ``env_b`` ``b``).
    steps, seed
        The rollout (keyword-only).

    Returns
    -------
    list of str
        The differences, as :func:`~specpack._tools._verify.compare.compare` lists them.
    """
    if type(steps) is not int or steps < 0:
        raise SpecPackError(f"steps={steps!r} must be a non-negative int")
    actions = plan_actions(env_a.action_space, steps, seed)
    a, b = (record(env, copy.deepcopy(actions), seed) for env in (env_a, env_b))
    return compare(a, b, shared=False)
