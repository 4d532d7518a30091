"""Tracebacks of by-value code that point at the real file and line: cloudpickle names every code
object it carries ``"<dynamic-code>"``, so :func:`located` wraps the object with each code object's
file name and the file's text, which :func:`restore_sources` puts back at load."""

from __future__ import annotations

import contextlib
import dataclasses
import linecache
import os
import pathlib
import types
from collections.abc import Iterator
from typing import Any

from .._restorer import restorer

__all__ = ["Located", "code_objects", "file_stamp", "located", "restore_sources"]

_DYNAMIC = "<dynamic-code>"
#: Largest source file carried for tracebacks, and the most carried for one object.
_MAX_FILE = 256 * 1024
_MAX_TOTAL = 1024 * 1024


def _functions(obj: Any, depth: int = 0) -> Iterator[types.FunctionType]:
    """Every function ``obj`` holds: itself, or a class's methods (nested classes included)."""
    if isinstance(obj, types.FunctionType):
        yield obj
    elif isinstance(obj, type) and depth < 8:
        for value in list(vars(obj).values()):
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            fns = (value.fget, value.fset, value.fdel) if isinstance(value, property) else (value,)
            yield from (f for f in fns if isinstance(f, types.FunctionType))
            if isinstance(value, type) and value.__module__ == obj.__module__:
                yield from _functions(value, depth + 1)


def code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    """``code`` and every code object nested in it, depth first."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from code_objects(const)


def _key(code: types.CodeType) -> tuple[str, int]:
    return (getattr(code, "co_qualname", code.co_name), code.co_firstlineno)


def located(obj: Any) -> Any:
    """``obj`` wrapped so that its by-value payload keeps file names and sources (or ``obj``)."""
    files = {_key(c): c.co_filename for f in _functions(obj) for c in code_objects(f.__code__)
             if c.co_filename and not c.co_filename.startswith("<")}
    if not files:
        return obj
    sources: dict[str, str] = {}
    total = 0
    for name in sorted(set(files.values())):
        text = _source(name)
        if text is not None and total <= _MAX_TOTAL:
            total += len(text)
            sources[name] = text
    return Located(obj, files, sources)


def file_stamp(name: str) -> tuple[int, int] | None:
    """``(size, mtime_ns)`` of a file (None: it cannot be read)."""
    try:
        st = os.stat(name)
    except (OSError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns)


_texts: dict[str, tuple[tuple[int, int], str | None]] = {}


def _source(name: str) -> str | None:
    """The text of a source file (re-read only when its size or modification time changed)."""
    stamp = file_stamp(name)
    if stamp is None:
        return None
    if (hit := _texts.get(name)) is not None and hit[0] == stamp:
        return hit[1]
    text: str | None = None
    if stamp[0] <= _MAX_FILE:
        with contextlib.suppress(OSError, UnicodeDecodeError, ValueError):
            text = pathlib.Path(name).read_text(encoding="utf-8")
    if len(_texts) > 256:
        _texts.clear()
    _texts[name] = (stamp, text)
    return text


@dataclasses.dataclass(slots=True, eq=False)
class Located:
    """Pickles as ``restore_sources(obj, files, sources)``: the object comes back relabelled."""

    obj: Any
    files: dict[tuple[str, int], str]
    sources: dict[str, str]

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore_sources, (self.obj, self.files, self.sources))


def _relabel(code: types.CodeType, files: dict[tuple[str, int], str]) -> types.CodeType:
    consts = tuple(_relabel(c, files) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    name = files.get(_key(code), _DYNAMIC) if code.co_filename == _DYNAMIC else code.co_filename
    if name == code.co_filename and consts == code.co_consts:
        return code
    return code.replace(co_filename=name, co_consts=consts)


@restorer
def restore_sources(obj: Any, files: dict[tuple[str, int], str], sources: dict[str, str]) -> Any:
    """Put the original file names back on ``obj``'s code, and the sources into linecache."""
    for f in _functions(obj):
        f.__code__ = _relabel(f.__code__, files)
    for name, text in sources.items():
        if name not in linecache.cache:
            linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    return obj
