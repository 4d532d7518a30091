"""``specpack audit``: audit a registry with :func:`specpack.audit` and show its report.

The library does the work; this handler imports the ``--import`` modules (the one
``--import``, so ``envs/ant_envs.py`` and ``ant_envs`` both work), keeps whatever the envs
print off stdout (``--json`` is a JSON document, nothing else), draws a progress bar on a
terminal, and prints the report's summary or JSON. Exit code 0 portable, 1 not, 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import SpecPackError
from .output import EXIT_NOT_IDENTICAL, EXIT_OK, AuditProgress, stdout_to_stderr
from .packfile import run_imports

__all__ = ["command"]


def command(ns: argparse.Namespace) -> int:
    """Run the audit the options describe; print ``str(report)`` or ``report.to_json()``."""
    from .._audit import audit

    wrappers: Any = "only" if ns.wrappers_only else bool(ns.wrappers)
    if wrappers == "only" and ns.targets:
        raise SpecPackError(
            f"--wrappers-only takes no TARGET (got {', '.join(map(repr, ns.targets))}); drop "
            "them, or use --wrappers to audit both"
        )
    given = {name: getattr(ns, name) for name in ("steps", "seed", "jobs", "timeout", "reference")
             if getattr(ns, name) is not None}
    show = AuditProgress(sys.stderr) if sys.stderr.isatty() and not ns.json else None
    with stdout_to_stderr():
        modules = run_imports(ns)
        report = audit(ns.targets, imports=modules, wrappers=wrappers, where=ns.where,
                       progress=show, backend=ns.backend, **given)
    print(report.to_json() if ns.json else str(report))
    sys.stdout.flush()
    return EXIT_OK if report else EXIT_NOT_IDENTICAL
