"""The client-library tests (Tianshou, TorchRL, Minari) run only in the venv that has them.

CI's clients venv (``pip install torch==2.13.0 && pip install torch==2.13.0 tianshou torchrl
'minari[create,hdf5]' -e '.[test-core]'``) runs ``SPECPACK_CLIENT_TESTS=1 python -m pytest
tests/integrations/test_tianshou_workers.py ...``. Elsewhere those files are not collected at
all: they belong to another venv, they are not skipped. With ``SPECPACK_CLIENT_TESTS=1`` a venv
missing one of the libraries is an error, so CI cannot pass by collecting nothing.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

#: Test files of the client libraries and the import each needs.
_CLIENT_FILES = {"test_tianshou*.py": "tianshou", "test_torchrl*.py": "torchrl",
                 "test_minari*.py": "minari"}

if os.environ.get("SPECPACK_CLIENT_TESTS") == "1":
    _missing = sorted(m for m in set(_CLIENT_FILES.values())
                      if importlib.util.find_spec(m) is None)
    if importlib.util.find_spec("jax") is None:
        _missing.append("jax (minari[create] collects with it)")
    if _missing:
        raise pytest.UsageError(
            f"SPECPACK_CLIENT_TESTS=1 but this venv lacks {', '.join(_missing)}; install with "
            "pip install torch==2.13.0 && pip install torch==2.13.0 tianshou torchrl "
            "'minari[create,hdf5]' -e '.[test-core]'"
        )
    collect_ignore_glob: list[str] = []
else:
    collect_ignore_glob = list(_CLIENT_FILES)
