"""OpenBLAS's idle spin in the fresh interpreters specpack starts.

numpy's OpenBLAS starts a thread per core when numpy loads, and an idle thread spins 2**n
cycles before it sleeps (``OPENBLAS_THREAD_TIMEOUT``; default n=28, about 0.1 s of a core per
interpreter). Fresh interpreters started side by side (verify's and the audit's workers,
make_vec's spawn workers and its forkserver) would take each other's cores spinning: they get
the shortest spin unless their environment names one. Results and thread counts are unchanged;
idle threads only sleep sooner.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

__all__ = ["BLAS_SPIN", "children_spin_briefly"]

BLAS_SPIN = ("OPENBLAS_THREAD_TIMEOUT", "4")


@contextlib.contextmanager
def children_spin_briefly() -> Iterator[None]:
    """Processes started inside inherit :data:`BLAS_SPIN`, unless this process's environment
    names a spin: multiprocessing gives its spawn workers and its forkserver this process's
    environment, with no way to pass another. Afterwards the environment is as it was."""
    name, value = BLAS_SPIN
    if name in os.environ:
        yield
        return
    os.environ[name] = value
    try:
        yield
    finally:
        if os.environ.get(name) == value:  # not set meanwhile by someone else
            del os.environ[name]
