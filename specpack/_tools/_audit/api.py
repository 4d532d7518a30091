"""The audit's Python API: :func:`audit` (a registry, or PettingZoo's env families) and
:func:`audit_one` (one env)."""

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

from ..._core._backends import DEFAULT_BACKEND, get_backend, with_trait
from ..._core._errors import BackendUnavailableError, SpecPackError
from ..._core._process.launch import Boundary
from ..._core._provenance import distribution_of
from ..._core._version import __version__
from .._imports import import_targets
from .._verify.engine import check_rollout_options
from .._verify.judge import control_is_cheap, hash_seeds
from .env_job import EnvJob
from .jobs import Context, Job
from .options import DEFAULT_TIMEOUT, REFERENCES
from .output import Capture, sections
from .report import CAPTURE_ERROR, MISSING_DEPENDENCY, AuditReport, Finding
from .scheduler import Scheduler
from .select import select
from .wrapper_fixtures import package_bases, wrapper_classes
from .wrapper_job import WrapperJob

__all__ = ["DEFAULT_TIMEOUT", "FAMILIES", "REFERENCES", "audit", "audit_one", "check_options"]

#: The families audited when no target is given (PettingZoo's own; add ``"mpe2"`` by name).
FAMILIES = ("pettingzoo.atari", "pettingzoo.butterfly", "pettingzoo.classic",
            "pettingzoo.mpe", "pettingzoo.sisl")


def check_options(where: str, steps: int, jobs: int | None, timeout: float,
                  reference: str | None) -> bool:
    """Validate the options (a :class:`SpecPackError` names one out of range and what it
    accepts); returns whether references are built in fork workers."""
    fork = "fork" in multiprocessing.get_all_start_methods()
    if reference is not None and reference not in REFERENCES:
        raise SpecPackError(f"reference={reference!r} is not one of {', '.join(REFERENCES)} "
                            "(or None: fork where the platform has it)")
    if reference == "fork" and not fork:
        raise SpecPackError("the fork start method is not available here, so the reference "
                            "cannot be built in forks;", python="use reference='here'",
                            cli="use --reference here")
    check_rollout_options(steps, 0, where, timeout)
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise SpecPackError(f"jobs={jobs!r} must be a positive int (or None for the CPU count)")
    # fork is safe enough for this on Linux; on macOS system frameworks may crash a fork child.
    return reference == "fork" or (reference is None and fork and sys.platform.startswith("linux"))


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
        n_workers = max(1, min(jobs or os.cpu_count() or 1, len(job_list) or 1))
        total = len(job_list)
        done = [0]

        def on_done(f: Finding) -> None:
            done[0] += 1
            if progress is not None:
                progress(f, done[0], total)

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
    if backend in with_trait("multi_agent"):
        if wrappers:
            raise SpecPackError(f"wrappers= audits gymnasium wrapper classes; drop it with "
                                f"backend={backend!r}")
        return pettingzoo_jobs(targets or list(imported), ctx)
    env_ids = [] if wrappers == "only" else select(targets)
    job_list: list[Job] = [EnvJob(i, ctx) for i in env_ids]
    if wrappers:
        extra = package_bases(imported)
        job_list += [WrapperJob(n, c, ctx, extra) for n, c in wrapper_classes(imported)]
    return job_list, []


def pettingzoo_jobs(targets: Sequence[str], ctx: Context) -> tuple[list[Job], list[Finding]]:
    """One job per factory of the env modules of ``targets`` (empty: :data:`FAMILIES`), each an
    :class:`~.env_job.EnvJob` named ``"<module>.<factory>"``, and a finding per env module that
    does not import; :class:`SpecPackError` when PettingZoo is not installed or a target names
    no env module."""
    try:
        backend: Any = get_backend("pettingzoo")  # an edge backend, named by the core
    except BackendUnavailableError as e:
        raise SpecPackError(
            f"auditing PettingZoo envs needs PettingZoo ({e.__cause__ or e}): pip install "
            "'specpack[pettingzoo]',",
            python="or leave backend='pettingzoo' out", cli="or leave --backend pettingzoo out",
        ) from None
    jobs: list[Job] = []
    decided: list[Finding] = []
    for target in list(targets) or list(FAMILIES):
        found = backend.env_modules([target])
        if not found:
            raise SpecPackError(
                f"{target!r} holds no PettingZoo env module (a module named like "
                "'pistonball_v6' defining env or parallel_env); give a family such as "
                "'pettingzoo.butterfly' or one env module (as a TARGET, or as --import when "
                "no TARGET is given)"
            )
        for module in found:
            if module.error is not None:
                status = MISSING_DEPENDENCY if module.missing else CAPTURE_ERROR
                reason = (f"needs {module.missing}: {module.error}" if module.missing
                          else f"importing it failed: {module.error}")
                decided.append(Finding("env", module.name, status, reason,
                                       package=module.missing))
                continue
            jobs += [EnvJob(f"{module.name}.{name}", ctx, target=factory)
                     for name, factory in module.factories.items()]
    return jobs, decided


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
