"""Carrying code and values across a process boundary.

From the bottom up (each module imports only those above it in this list):

- :mod:`.names`: what a ``module:qualname`` reference names (resolved strictly).
- :mod:`.importable`: could a fresh interpreter import this module by name?
  :mod:`.sources`: the source files by-value code travels with.
- :mod:`.allowlist`: which references a pack from a file may resolve;
  :mod:`.payload`: cloudpickle payloads, with the modules pickled by value and a witness.
- :mod:`.tree`: the walks over a lowered tree (materialise, exact key, exact pickling).
- :mod:`.carried`: :class:`Blob` and :class:`EnumRef`; :mod:`.ref`: :class:`CodeRef`, a
  class or function by reference or by value (the value, its state, loading it).
- :mod:`.callables`: a live class or function made into a :class:`CodeRef`.
- :mod:`.values`: kwargs trees lowered at capture (deep-copied, code carried, objects pickled).
- :mod:`.bound`: a ``functools.partial`` as its function plus lowered arguments.
- :mod:`.code`: :func:`~.code.code_ref` and :func:`~.code.code_ref_from_string`, what capture calls.

``CodeRef``, ``Blob`` and ``EnumRef`` are the public, read-only types a pack exposes
(``pack.entry_point``, ``layer.cls``, ``pack.carried()``).
"""

from __future__ import annotations

from .carried import Blob, EnumRef
from .ref import CodeRef

__all__ = ["Blob", "CodeRef", "EnumRef"]
