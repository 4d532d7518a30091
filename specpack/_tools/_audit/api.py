"""The audit's Python API: :func:`audit` (a registry) and :func:`audit_one` (one env)."""

from __future__ import annotations

import multiprocessing
import os
import platform
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ..._core._backends import DEFAULT_BACKEND, with_trait
from ..._core._errors import SpecPackError
from ..._core._process import Boundary
from ..._core._provenance import distribution_of
from ..._core._version import __version__
from .._imports import import_targets
from .._verify.engine import check_rollout_options
from .._verify.judge import control_is_cheap, hash_seeds
from .env_job import EnvJob
from .families import pettingzoo_jobs
from .jobs import Context, Job
from .options import DEFAULT_TIMEOUT, REFERENCES
from .output import Capture, sections
from .report import AuditReport, Finding
from .scheduler import Scheduler
from .select import select
from .wrapper_fixtures import package_bases, wrapper_classes
from .wrapper_job import WrapperJob

__all__ = ["DEFAULT_TIMEOUT", "REFERENCES", "audit", "audit_one", "check_options"]


def _fork_available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def check_options(where: str, steps: int, jobs: int | None, timeout: float,
                  reference: str | None) -> bool:
    """Validate the options (a :class:`SpecPackError` names one out of range and what it
    accepts); returns whether references are built in fork workers."""
    if reference is not None and reference not in REFERENCES:
        raise SpecPackError(f"reference={reference!r} is not one of {', '.join(REFERENCES)} "
                            "(or None: fork where the platform has it)")
    if reference == "fork" and not _fork_available():
        raise SpecPackError("the fork start method is not available here, so the reference "
                            "cannot be built in forks;", python="use reference='here'",
                            cli="use --reference here")
    check_rollout_options(steps, 0, where, timeout)
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise SpecPackError(f"jobs={jobs!r} must be a positive int (or None for the CPU count)")
    # fork is safe enough for this on Linux; on macOS system frameworks may crash a fork child.
    default_fork = sys.platform.startswith("linux") and _fork_available()
    return reference == "fork" or (reference is None and default_fork)


def _versions() -> dict[str, str]:
    found = [distribution_of(mod) for mod in ("gymnasium", "numpy")]
    return {"python": platform.python_version(), "specpack": __version__,
            **dict(f for f in found if f)}


def _context(steps: int, seed: int, timeout: float, where: str) -> Context:
    """The options of one audit, with a new temporary folder (the caller removes it)."""
    return Context(steps=steps, seed=seed, timeout=float(timeout), where=where,
                   tmp=tempfile.mkdtemp(prefix="specpack-audit-"),
                   seeds=hash_seeds(where, control=True), control_always=control_is_cheap())


def _run(jobs: list[Job], n: int, ctx: Context, fork_refs: bool,
         on_done: Callable[[Finding], None] | None) -> list[Finding]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Scheduler(jobs, n, ctx, on_done, fork_refs).run() if jobs else []


def audit(targets: str | Sequence[str] = (), imports: Sequence[str] = (),
          wrappers: bool | Literal["only"] = False, where: Boundary = "subprocess",
          steps: int = 50, seed: int = 0, jobs: int | None = None,
          timeout: float = DEFAULT_TIMEOUT, *, reference: str | None = None,
          progress: Callable[[Finding, int, int], None] | None = None,
          backend: str = DEFAULT_BACKEND) -> AuditReport:
    """Check that every selected env (and wrapper) survives a process boundary.

    Each env is captured here, built twice where it is registered (two builds that differ make
    it ``not_reproducible``), rebuilt in one of ``jobs`` fresh long-lived workers, and compared
    over the same seeded actions by the engine ``verify`` uses. A rebuild whose rollout differs
    is confirmed by more clean builds where the env is registered. Example::

        report = specpack.audit(["minigrid"], steps=20)
        assert report, str(report)

    Parameters
    ----------
    targets
        Env ids, namespaces (``"ALE/"``), entry-point module prefixes (``"minigrid"``;
        imported if nothing matches yet), or nothing for the whole registry.
    imports
        Modules to import first, as a training script would (names or ``.py`` paths, as
        ``--import`` takes them).
    wrappers
        Also audit every wrapper class of ``gymnasium.wrappers`` and of the imported modules
        (``"only"``: the wrappers alone).
    where
        The remote workers: ``"subprocess"`` (a fresh ``python``), ``"spawn"``,
        ``"forkserver"``.
    steps, seed
        The rollout.
    jobs
        Workers per side (default: the CPU count).
    timeout
        Seconds one env may take on either side; its worker is then killed and replaced.
    reference
        ``"fork"``: references in fork workers (the default on Linux); ``"here"``: in this
        process, one at a time.
    progress
        Called with each finding and the counts done/total.
    backend
        ``"gymnasium"`` (targets select from gymnasium's registry) or ``"pettingzoo"``
        (targets are PettingZoo family packages such as ``"pettingzoo.butterfly"`` or env
        modules, by default the ``imports``, else every PettingZoo family; every
        ``parallel_env``/``env`` factory is one env, rolled out per agent).

    Returns
    -------
    AuditReport
        Truthy iff no finding fails the audit. What the envs print (Python or C, here or in
        a worker) is kept in each finding's ``output``, what importing and selecting printed
        in the report's; none of it reaches this process's streams.

    Raises
    ------
    SpecPackError
        Bad input: an unknown target, a failing import, an option out of range. What the envs
        do is reported, never raised.
    """
    fork_refs = check_options(where, steps, jobs, timeout, reference)
    start = time.perf_counter()
    if isinstance(targets, str):
        targets = [targets]
    audited = with_trait("audit")
    if backend not in audited:
        raise SpecPackError(f"backend={backend!r} is not one of {', '.join(audited)}")
    ctx = _context(steps, seed, timeout, where)
    printed = Capture()  # the imports' and the selection's prints: the report's own output
    try:
        with printed:
            job_list, decided = _jobs(list(targets), imports, wrappers, backend, ctx)
    except BaseException:
        shutil.rmtree(ctx.tmp, ignore_errors=True)
        raise
    n_workers = max(1, min(jobs or os.cpu_count() or 1, len(job_list) or 1))
    total = len(job_list)
    done = [0]

    def on_done(f: Finding) -> None:
        done[0] += 1
        if progress is not None:
            progress(f, done[0], total)

    try:
        findings = decided + _run(job_list, n_workers, ctx, fork_refs, on_done)
    finally:
        shutil.rmtree(ctx.tmp, ignore_errors=True)
    return AuditReport(
        envs=[f for f in findings if f.kind == "env"],
        wrappers=[f for f in findings if f.kind == "wrapper"],
        elapsed=time.perf_counter() - start, where=where, steps=steps, seed=seed,
        jobs=n_workers, timeout=float(timeout), versions=_versions(),
        output=sections([("importing and selecting (here)", printed.stdout, printed.stderr)]),
    )


def _jobs(targets: list[str], imports: str | Sequence[str], wrappers: bool | str,
          backend: str, ctx: Context) -> tuple[list[Job], list[Finding]]:
    """Import ``imports`` and select what to audit (registry ids and gymnasium wrappers, or
    the env modules of PettingZoo families): the jobs, and findings decided already."""
    imported = import_targets([imports] if isinstance(imports, str) else list(imports),
                              option="imports")
    multi_agent = backend in with_trait("multi_agent")
    if multi_agent and wrappers:
        raise SpecPackError(f"wrappers= audits gymnasium wrapper classes; drop it with "
                            f"backend={backend!r}")
    env_ids = [] if wrappers == "only" or multi_agent else select(targets)
    job_list: list[Job] = [EnvJob(i, ctx) for i in env_ids]
    decided: list[Finding] = []
    if multi_agent:
        job_list, decided = pettingzoo_jobs(targets or list(imported), ctx)
    if wrappers:
        extra = package_bases(imported)
        job_list += [WrapperJob(n, c, ctx, extra) for n, c in wrapper_classes(imported)]
    return job_list, decided


def audit_one(target: Any, *, steps: int = 50, seed: int = 0, where: Boundary = "subprocess",
              timeout: float = DEFAULT_TIMEOUT, reference: str | None = "here") -> Finding:
    """The verdict on a single env given as an id, a live env (captured, never stepped), an
    ``EnvSpec``, a class or a pack; the options as for :func:`audit`."""
    fork_refs = check_options(where, steps, 1, timeout, reference)
    name = target if isinstance(target, str) else (
        getattr(getattr(target, "spec", None), "id", None) or getattr(target, "label", None)
        or getattr(target, "__qualname__", None) or type(target).__qualname__)
    ctx = _context(steps, seed, timeout, where)
    try:
        return _run([EnvJob(str(name), ctx, target=target)], 1, ctx, fork_refs, None)[0]
    finally:
        shutil.rmtree(ctx.tmp, ignore_errors=True)
