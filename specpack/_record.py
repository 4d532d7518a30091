"""Frozen value classes declared as dataclasses, with no code generated when they are defined.

``@dataclass(frozen=True)`` writes ``__init__``, ``__setattr__``, ``__delattr__``, ``__repr__``,
``__eq__`` and ``__hash__`` as source text and compiles it when the class statement runs, at
every import: for :class:`~specpack.SpecPack` and its surface that is about 9 M instructions,
1.5 % of a fresh worker's whole life up to a built env (``benchmarks/bench_import.py``).
:func:`frozen` keeps the declaration a dataclass (``dataclasses.fields``, ``replace``,
``field(default=..., default_factory=..., init=False, compare=False, repr=False)`` and
``InitVar`` mean what they mean there) and gives the class generic methods instead, which read
the class's fields once, on first use. Type checkers see a frozen dataclass
(``typing.dataclass_transform``).
"""

from __future__ import annotations

import dataclasses
import reprlib
import sys
from collections.abc import Callable
from typing import Any, TypeVar, overload

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - Python 3.10 (gymnasium depends on typing_extensions)
    from typing_extensions import dataclass_transform

__all__ = ["frozen"]

T = TypeVar("T")
_MISSING: Any = dataclasses.MISSING


class _Plan:
    """What the generic methods need of one class's fields (written out: a ``NamedTuple``
    generates code too)."""

    __slots__ = ("compared", "init", "initvars", "kw_only", "later", "shown")

    def __init__(self, cls: type) -> None:
        real = dataclasses.fields(cls)
        names = {f.name for f in real}
        declared: dict[str, dataclasses.Field[Any]] = cls.__dataclass_fields__  # type: ignore[attr-defined]
        self.init = tuple(f for f in real if f.init)
        self.later = tuple(f for f in real if not f.init)
        self.initvars = tuple((n, f.default) for n, f in declared.items()
                              if n not in names and _is_initvar(f))
        self.compared = tuple(f.name for f in real if f.compare)
        self.shown = tuple(f.name for f in real if f.repr)
        # a subclass that is not decorated itself takes its record base's constructor
        self.kw_only = next((_KW_ONLY[c] for c in cls.__mro__ if c in _KW_ONLY), False)

    init: tuple[dataclasses.Field[Any], ...]  # constructor fields, in declaration order
    later: tuple[dataclasses.Field[Any], ...]  # ``init=False`` fields (given their defaults)
    initvars: tuple[tuple[str, Any], ...]  # ``InitVar`` names and defaults, for __post_init__
    compared: tuple[str, ...]  # what ``==`` and ``hash`` read
    shown: tuple[str, ...]  # what ``repr`` shows
    kw_only: bool


_PLANS: dict[type, _Plan] = {}
#: The options :func:`frozen` was given, per class (read by :func:`_plan`).
_KW_ONLY: dict[type, bool] = {}


def _is_initvar(f: dataclasses.Field[Any]) -> bool:
    """Whether a declared name is an ``InitVar`` (its type is a string under PEP 563)."""
    t = f.type
    if isinstance(t, dataclasses.InitVar) or t is dataclasses.InitVar:
        return True
    return isinstance(t, str) and t.removeprefix("dataclasses.").startswith("InitVar")


def _plan(cls: type) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _Plan(cls)
    return plan


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not _MISSING:
        return f.default
    factory: Any = f.default_factory
    if factory is not _MISSING:
        return factory()
    return _MISSING


def _init(self: Any, *args: Any, **values: Any) -> None:
    cls = type(self)
    plan = _plan(cls)
    where = f"{cls.__qualname__}.__init__()"
    if args:
        if plan.kw_only or len(args) > len(plan.init):
            raise TypeError(f"{where} takes {0 if plan.kw_only else len(plan.init)} positional "
                            f"arguments but {len(args)} were given")
        for f, value in zip(plan.init, args):
            if f.name in values:
                raise TypeError(f"{where} got multiple values for argument {f.name!r}")
            values[f.name] = value
    put = object.__setattr__
    for f in plan.init:
        value = values.pop(f.name, _MISSING)
        if value is _MISSING:
            value = _default(f)
            if value is _MISSING:
                raise TypeError(f"{where} missing required argument: {f.name!r}")
        put(self, f.name, value)
    extra = [values.pop(name, default) for name, default in plan.initvars]
    for (name, _), value in zip(plan.initvars, extra):
        if value is _MISSING:  # by identity: ``in`` would compare an array with ==
            raise TypeError(f"{where} missing required argument: {name!r}")
    if values:
        raise TypeError(f"{where} got an unexpected keyword argument {next(iter(values))!r}")
    for f in plan.later:
        value = _default(f)
        if value is not _MISSING:
            put(self, f.name, value)
    post = getattr(self, "__post_init__", None)
    if post is not None:
        post(*extra)


def _refuse_set(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_delete(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in _plan(type(self)).compared)


def _eq(self: Any, other: object) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return self is other or _values(self) == _values(other)


def _hash(self: Any) -> int:
    return hash(_values(self))


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(dataclasses.fields(self), state):
        object.__setattr__(self, f.name, value)


@reprlib.recursive_repr()
def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _plan(type(self)).shown)
    return f"{type(self).__qualname__}({shown})"


class _Factory:
    def __repr__(self) -> str:
        return "<factory>"  # as dataclasses shows a default_factory


_FACTORY = _Factory()


class _Signature:
    """``cls.__signature__``: what ``help()`` and ``inspect.signature`` show for the generic
    ``__init__`` (made on first use: :mod:`inspect` costs more than the class)."""

    def __get__(self, obj: Any, cls: type) -> Any:
        if obj is not None:
            raise AttributeError("__signature__")
        import inspect

        plan = _plan(cls)
        kind = inspect.Parameter.KEYWORD_ONLY if plan.kw_only else \
            inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = [inspect.Parameter(f.name, kind, annotation=f.type, default=f.default
                                    if f.default is not _MISSING else _FACTORY
                                    if f.default_factory is not _MISSING
                                    else inspect.Parameter.empty)
                  for f in plan.init]
        declared = cls.__dataclass_fields__  # type: ignore[attr-defined]
        params += [inspect.Parameter(name, kind, annotation=declared[name].type,
                                     default=inspect.Parameter.empty if default is _MISSING
                                     else default)
                   for name, default in plan.initvars]
        return inspect.Signature(params, return_annotation=None)


@overload
def frozen(cls: type[T], /) -> type[T]: ...
@overload
def frozen(*, eq: bool = True, kw_only: bool = False, slots: bool = False,
           repr: bool = True) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(eq_default=True, kw_only_default=False, frozen_default=True,
                     field_specifiers=(dataclasses.field, dataclasses.Field))
def frozen(cls: type[T] | None = None, /, *, eq: bool = True, kw_only: bool = False,
           slots: bool = False, repr: bool = True) -> Any:
    """A frozen dataclass without generated code (a class decorator).

    Parameters
    ----------
    cls
        The class (when used bare, ``@frozen``).
    eq
        Give it ``==`` and ``hash`` over its compared fields, as ``dataclass(eq=True,
        frozen=True)`` does; False leaves the class's own (or ``object``'s).
    kw_only
        The constructor takes keywords only.
    slots
        Make it a slotted class (no ``__dict__``).
    repr
        Give it ``ClassName(field=value, ...)``; False leaves the class's own.
    """

    def wrap(c: type[T]) -> type[T]:
        body = c.__dict__
        out: Any = dataclasses.dataclass(init=False, repr=False, eq=False, slots=slots)(c)
        _KW_ONLY[out] = kw_only
        out.__init__ = _init
        out.__setattr__ = _refuse_set
        out.__delattr__ = _refuse_delete
        out.__signature__ = _Signature()
        if eq and "__eq__" not in body:
            out.__eq__ = _eq
            out.__hash__ = _hash if "__hash__" not in body else body["__hash__"]
        if slots and "__getstate__" not in body and "__reduce__" not in body:
            out.__getstate__ = _getstate  # pickle's default would set slots with setattr
            out.__setstate__ = _setstate
        if repr and "__repr__" not in body:
            out.__repr__ = _repr
        return out  # type: ignore[no-any-return]

    return wrap if cls is None else wrap(cls)
