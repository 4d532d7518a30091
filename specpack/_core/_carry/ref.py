"""The :class:`CodeRef` value, a class or function carried by reference or by value: its fields,
equality, pickling and loading; :mod:`.code` makes one from a live object."""

from __future__ import annotations

import functools
import hashlib
import importlib
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gymnasium.envs import registration as gym_registration

from .._errors import BuildError, UntrustedPackError
from .._restorer import restorer
from .allowlist import admitted, may_import, resolve_reference
from .carried import PY, Blob, loads_payload
from .tree import SCALAR_TYPES, Carried, exact_key, materialize, pickle_exact

if TYPE_CHECKING:
    from .payload import Witness

__all__ = ["CodeRef", "code_ref_from_state", "iter_carried", "live_object", "witness_of"]

_load_lock = threading.Lock()
_loaded: dict[str, Any] = {}


class CodeRef(Carried):
    """A class or function, carried by reference (``module:qualname``) or by value (payload).

    Immutable and hashable by content. ``load()`` returns the object here, importing its module
    or unpickling its payload once per process (every rebuild shares one class). A *bound*
    reference also holds a ``functools.partial``'s lowered arguments; ``load()`` returns it.
    """

    __slots__ = ("_bound_key", "_digest", "_live", "_obj", "_witness", "allow", "bound",
                 "module", "payload", "python", "qualname", "registered")

    module: str
    qualname: str
    payload: bytes | None
    python: str | None
    allow: tuple[str, ...] | None
    registered: str | None
    bound: tuple[tuple[Any, ...], dict[str, Any]] | None
    _bound_key: Any
    _digest: str | None
    _obj: Any
    _live: Any
    _witness: Witness | None

    def __init__(self, module: str, qualname: str, payload: bytes | None = None,
                 python: str | None = None, allow: tuple[str, ...] | None = None,
                 registered: str | None = None,
                 bound: tuple[tuple[Any, ...], dict[str, Any]] | None = None) -> None:
        self._set(module=module, qualname=qualname, payload=payload,
                  python=python if payload is not None else None,
                  allow=None if allow is None else tuple(allow), registered=registered,
                  bound=None if bound is None else (tuple(bound[0]), dict(bound[1])),
                  _bound_key=None, _digest=None, _obj=None, _live=None, _witness=None)

    def __reduce__(self) -> tuple[Any, ...]:
        name, allow = (self.module, self.qualname), self.allow
        if self.bound is not None:
            return (restore_code_ref, (*name, None, None, allow, None, pickle_exact(self.bound)))
        if self.registered is not None:
            return (restore_code_ref, (*name, None, None, allow, self.registered))
        args = (*name, self.payload, self.python)
        return (restore_code_ref, args if allow is None else (*args, allow))

    @property
    def by_value(self) -> bool:
        """True when the code travels as a cloudpickle payload."""
        return self.payload is not None

    @property
    def name(self) -> str:
        """``module:qualname``, as written in entry points (``module:registry['id']`` for a
        callable the module registers under an id)."""
        if self.registered is not None:
            return f"{self.module}:registry[{self.registered!r}]"
        return f"{self.module}:{self.qualname}"

    @property
    def digest(self) -> str | None:
        """``sha256:<hex>`` of the payload (None for a reference)."""
        if self.payload is None:
            return None
        if self._digest is None:
            self._set(_digest="sha256:" + hashlib.sha256(self.payload).hexdigest())
        return self._digest

    def _key(self) -> tuple[Any, ...]:
        key = (self.module, self.qualname, self.digest, self.python, self.registered)
        if self.bound is None:
            return key
        if self._bound_key is None:
            self._set(_bound_key=exact_key(self.bound))
        return (*key, self._bound_key)

    def _exact_key(self) -> tuple[Any, ...]:
        return ("c", *self._key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CodeRef) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        if self.bound is not None:
            args, keywords = self.bound
            shown = [*map(repr, args), *(f"{k}={v!r}" for k, v in keywords.items())]
            return f"CodeRef(partial({self.name!r}, {', '.join(shown)}))"
        if self.payload is None:
            return f"CodeRef({self.name!r})"
        return f"CodeRef({self.name!r}, by_value, {len(self.payload)} bytes, {self.digest})"

    def load(self) -> Any:
        """The object itself, in this process (cached after the first call)."""
        if self._obj is not None:
            return self._obj
        obj = self._load()
        if self.bound is not None:
            args, keywords = self.bound
            obj = functools.partial(obj, *materialize(args), **materialize(keywords))
        self._set(_obj=obj)
        return obj

    def _load(self) -> Any:
        if self.registered is not None:
            return self._load_registered()
        if self.payload is None:
            return resolve_reference(self.module, self.qualname, self.allow)
        digest = self.digest
        assert digest is not None
        if self.python is None:
            raise BuildError(
                f"{self.name} is carried by value but its record says nothing about the Python "
                f"version it was pickled under; capture the pack again under Python {PY}"
            )
        if self.python != PY:
            raise BuildError(
                f"{self.name} was carried by value under Python {self.python} and cannot be "
                f"loaded under Python {PY}: cloudpickle payloads are tied to the Python minor "
                f"version; capture the pack again under Python {PY}, or make the code importable "
                "so it travels by reference"
            )
        obj = _loaded.get(digest)
        if obj is not None:
            return obj
        with _load_lock:
            obj = _loaded.get(digest)
            if obj is None:
                try:
                    obj = loads_payload(self.payload)
                except Exception as e:
                    raise BuildError(
                        f"cannot load {self.name} carried by value ({type(e).__name__}: {e}); "
                        "a module it needs is missing here"
                    ) from e
                _loaded[digest] = obj
        return obj

    def _load_registered(self) -> Any:
        """What importing ``module`` registers in gymnasium under ``registered`` (under ``allow``,
        each module is checked before its import, the callable found as a reference would be)."""
        allow = self.allow
        if allow is not None and not may_import(self.module, self.qualname, allow):
            raise UntrustedPackError(f"{self.name} is outside the allow list {list(allow)}; "
                                     "nothing was imported")
        try:
            importlib.import_module(self.module)
        except Exception as e:
            raise BuildError(
                f"cannot import {self.module} in this process ({type(e).__name__}: {e}); "
                f"importing it is what registers {self.registered!r}: install it here"
            ) from e
        spec = gym_registration.registry.get(self.registered or "")
        # a vector-only spec (Meta-World's MT10) registers its vector creator instead
        entry = None if spec is None else (
            spec.entry_point if spec.entry_point is not None else spec.vector_entry_point)
        if entry is None:
            raise BuildError(
                f"importing {self.module} here did not register {self.registered!r} with an "
                "entry point (another version of the package?); install the version the pack "
                "was captured with"
            )
        if allow is not None and isinstance(entry, str):
            mod, _, attr = entry.partition(":")
            if mod != self.module and not may_import(mod, attr, allow):
                raise UntrustedPackError(f"{self.name} is registered as {entry!r}, outside the "
                                         f"allow list {list(allow)}; nothing was imported")
        obj = gym_registration.load_env_creator(entry) if isinstance(entry, str) else entry
        if allow is not None:
            home, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
            named = isinstance(home, str) and isinstance(qual, str)
            why = (admitted(obj, str(home), str(qual), allow) if named else
                   f"it has no module and qualified name, so the allow list {list(allow)} "
                   "cannot name it")
            if why is not None:
                real = f"{home}:{qual}" if named else repr(obj)
                raise UntrustedPackError(f"{self.name} resolves to {real}: {why}")
        return obj

    def _state(self) -> tuple[Any, ...]:
        """The fields as builtins (what a pickled pack carries); a bound one's arguments 7th."""
        state = (self.module, self.qualname, self.payload, self.python, self.allow, self.registered)
        return state if self.bound is None else (*state, pickle_exact(self.bound))


_interned: dict[tuple[Any, ...], CodeRef] = {}


@restorer
def restore_code_ref(*args: Any) -> CodeRef:
    return CodeRef(*args)


def code_ref_from_state(state: tuple[Any, ...]) -> CodeRef:
    """The :class:`CodeRef` of a :meth:`CodeRef._state` tuple. A reference is interned, so
    unpickling a pack many times (Ray, SB3 workers) loads its code once."""
    if len(state) > 6 or state[2] is not None:  # bound arguments are no hashable key
        return CodeRef(*state)
    hit = _interned.get(state)
    if hit is None:
        if len(_interned) > 65536:
            _interned.clear()
        hit = _interned[state] = CodeRef(*state)
    return hit


def live_object(ref: CodeRef) -> Any:
    """The object ``ref`` stands for here without loading a payload (``None`` for a by-value
    ref read from a pickle or a file): loaded in the process that pickled it, a payload
    writes its state over the live class (cloudpickle's class tracking)."""
    if ref._obj is not None:
        return ref._obj
    if ref.payload is not None:
        return ref._live
    return ref.load()


def live_objects(refs: Iterable[CodeRef]) -> list[Any]:
    """:func:`live_object` of each of ``refs``, None for one that cannot be loaded here."""
    out = []
    for ref in refs:
        try:
            out.append(ref._obj if ref._obj is not None else live_object(ref))  # fast path
        except Exception:  # noqa: BLE001 - code that cannot be loaded names nothing more
            out.append(None)
    return out


def witness_of(ref: CodeRef) -> Witness | None:
    """The :class:`~.payload.Witness` of a by-value ``ref`` made here (else ``None``)."""
    return ref._witness


def iter_carried(tree: Any) -> list[CodeRef | Blob]:
    """Every CodeRef and Blob inside a lowered tree, in a stable order."""
    if type(tree) is dict and all(
            type(k) in SCALAR_TYPES and type(v) in SCALAR_TYPES for k, v in tree.items()):
        return []  # kwargs of scalars only (the common case): nothing to walk
    out: list[CodeRef | Blob] = []

    def walk(node: Any) -> None:
        t = type(node)
        if t is CodeRef or t is Blob:
            out.append(node)
            if t is CodeRef and node.bound is not None:  # a partial's arguments
                walk(node.bound)
        elif t is dict or t is list or t is tuple:
            for v in node.items() if t is dict else node:  # an item: a (key, value) tuple
                walk(v)
        elif t is set or t is frozenset:
            for v in sorted(node, key=repr):
                walk(v)

    walk(tree)
    return out
