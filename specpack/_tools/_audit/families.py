"""What an audit with ``backend="pettingzoo"`` walks (PettingZoo has no registry): the env
modules of family packages (``"pettingzoo.butterfly"``, ``"mpe2"``), each factory an ordinary
:class:`~.env_job.EnvJob` named ``"<module>.<factory>"``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._core._backends import get_backend
from ..._core._errors import BackendUnavailableError, SpecPackError
from .env_job import EnvJob
from .jobs import Context, Job
from .report import CAPTURE_ERROR, MISSING_DEPENDENCY, Finding

__all__ = ["FAMILIES", "pettingzoo_jobs"]

#: The families audited when no target is given (PettingZoo's own; add ``"mpe2"`` by name).
FAMILIES = ("pettingzoo.atari", "pettingzoo.butterfly", "pettingzoo.classic",
            "pettingzoo.mpe", "pettingzoo.sisl")


def pettingzoo_jobs(targets: Sequence[str], ctx: Context) -> tuple[list[Job], list[Finding]]:
    """One job per factory of the env modules of ``targets`` (empty: :data:`FAMILIES`), and a
    finding per env module that does not import; :class:`SpecPackError` when PettingZoo is not
    installed or a target names no env module."""
    try:
        backend: Any = get_backend("pettingzoo")  # an edge backend, named by the core
    except BackendUnavailableError as e:
        raise SpecPackError(
            f"auditing PettingZoo envs needs PettingZoo ({e.__cause__ or e}): pip install "
            "'specpack[pettingzoo]',",
            python="or leave backend='pettingzoo' out", cli="or leave --backend pettingzoo out",
        ) from None
    env_modules = backend.env_modules
    jobs: list[Job] = []
    decided: list[Finding] = []
    for target in list(targets) or list(FAMILIES):
        found = env_modules([target])
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
