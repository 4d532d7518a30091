"""The Sample Factory and PufferLib adapter tests run only in the venv that has both libraries.

They pin gymnasium<1.0 (Sample Factory 2.1.1) and gymnasium<=0.29.1, numpy<2 (PufferLib 3.0),
so CI gives them their own venv (.ci/run: gymnasium 0.29.1, torch, sample-factory 2.1.1 and the
pure-Python ``pufferlib`` package of its sdist), which runs ``SPECPACK_VECLIB_TESTS=1 python -m
pytest tests/integrations/adapters/test_sample_factory.py
tests/integrations/adapters/test_pufferlib.py``. Elsewhere those files are not collected at
all: they belong to another venv, they are not skipped. With
``SPECPACK_VECLIB_TESTS=1`` a venv missing one of the libraries is an error, so CI cannot pass
by collecting nothing.

The tests run their scripts (``run_*.py`` here) with :func:`veclib_run.run_bounded`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import tempfile

import pytest

#: Test files of the vec-env libraries and the import each needs.
_VECLIB_FILES = {"test_sample_factory.py": "sample_factory", "test_pufferlib.py": "pufferlib"}

if os.environ.get("SPECPACK_VECLIB_TESTS") == "1":
    _missing = sorted(m for m in _VECLIB_FILES.values() if importlib.util.find_spec(m) is None)
    if _missing:
        raise pytest.UsageError(
            f"SPECPACK_VECLIB_TESTS=1 but this venv lacks {', '.join(_missing)}; install with "
            "pip install torch==2.13.0 && pip install torch==2.13.0 gymnasium==0.29.1 "
            "sample-factory==2.1.1 gym==0.23.1 -e '.[test-core]', and PufferLib's pure-Python "
            "package from its sdist (see .ci/run)"
        )
    collect_ignore_glob: list[str] = []
    # Importing pufferlib symlinks "resources" into the working directory: import it once
    # from a temporary one, so the checkout stays clean.
    with tempfile.TemporaryDirectory() as _tmp, contextlib.chdir(_tmp):
        import pufferlib  # noqa: F401
else:
    collect_ignore_glob = list(_VECLIB_FILES)
