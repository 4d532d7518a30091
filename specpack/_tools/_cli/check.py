"""``specpack check``: rebuild a sealed pack file and compare it with the seal it carries.
Exit code 0 identical, 1 anything else, 2 an unsealed or unreadable file, or what
:func:`.packfile.preflight` finds."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any

from ..._core._errors import SpecPackError, WorkerError
from ..._core._text import printable, public_names
from ...files import load
from .._seal import CheckReport, Seal, check_seal
from .._verify.report import REBUILD_ERROR
from .output import EXIT_BAD_INPUT, EXIT_NOT_IDENTICAL, EXIT_OK, spinner, stdout_to_stderr
from .packfile import check_file as check_path
from .packfile import preflight, read_key, run_imports

__all__ = ["NOT_SEALED", "SEAL_IN_PYTHON", "SEAL_ON_CLI", "check_file", "command"]

NOT_SEALED = "this pack file is not sealed:"
#: The fix in Python, and on the command line (``capture --seal``, or ``verify``, which proves
#: a file without a seal).
SEAL_IN_PYTHON = ("make it with specpack.seal(pack) before dump (e.g. "
                  "specpack.dump(specpack.seal(pack), path))")
SEAL_ON_CLI = ("capture it again sealed: specpack capture ID --seal STEPS -o FILE (add "
               "--self-contained to carry its files and code); or run specpack verify FILE, "
               "which compares two fresh builds and needs no seal")


def check_file(path: str, seal: Seal | None = None, *, trust: bool = False,
               key: bytes | None = None, allow: Sequence[str] | None = None,
               where: str = "subprocess", timeout: float = 120.0,
               before: Callable[[Any], None] | None = None) -> tuple[Any, CheckReport]:
    """Load the pack file ``path`` (as :func:`specpack.load`) and check it against ``seal``
    (default: the one it carries), calling ``before`` with it first; return ``(pack, report)``."""
    check_path(path)
    pack = load(path, trust=trust, key=key, allow=allow)
    if seal is None:
        seal = getattr(pack, "sealed", None)
        if not isinstance(seal, Seal):
            raise SpecPackError(f"{path}: {NOT_SEALED}", python=SEAL_IN_PYTHON, cli=SEAL_ON_CLI)
    if before is not None:
        before(pack)
    return pack, check_seal(pack, seal, where=where, timeout=timeout)


def command(ns: argparse.Namespace) -> int:
    """Check ``ns.file`` against its seal; print the report (text or ``--json``)."""
    run_imports(ns)
    where = "this process" if ns.where == "here" else (
        "a fresh interpreter" if ns.where == "subprocess" else f"a {ns.where} child")
    with spinner(f"checking {ns.file} against its seal in {where}"), stdout_to_stderr():
        pack, report = check_file(ns.file, trust=bool(ns.trust), key=read_key(ns.key_file),
                                  allow=ns.allow, where=ns.where, timeout=ns.timeout,
                                  before=preflight)
    # A rebuild that could not be built or run at all is said as `specpack run` says it.
    failed = (public_names(report.differences[0])
              if report.status == REBUILD_ERROR and len(report.differences) == 1 else None)
    if failed is not None and not ns.json:
        first, _, tail = failed.partition("\n")
        raise WorkerError(f"{pack.label}: {first}", child_traceback=tail.strip("\n"))
    if ns.json:
        doc = {"file": ns.file, "id": pack.id, "identical": bool(report), **report.to_dict()}
        print(json.dumps(doc, indent=2, default=str, ensure_ascii=True))
        if failed is not None:
            return EXIT_BAD_INPUT
    else:
        first, *rest = public_names(str(report)).splitlines() or [""]
        lines = [f"{printable(pack.label, limit=2000)}: {printable(first, limit=2000)}"]
        print("\n".join(lines + [printable(line, limit=2000) for line in rest]))
    return EXIT_OK if report else EXIT_NOT_IDENTICAL

