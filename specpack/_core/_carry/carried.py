"""The carried values that are not code: a :class:`Blob` (an object pickled by value at capture)
and an :class:`EnumRef` (an enum member named in a manifest), and :func:`loads_payload`, how every
by-value payload is unpickled."""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import io
import operator
import pickle
import sys
from typing import Any

from .._errors import BuildError
from .._restorer import restorer
from .allowlist import resolve_reference
from .tree import Carried

__all__ = ["PY", "Blob", "EnumRef", "loads_payload"]

#: This interpreter's ``major.minor``: what a by-value payload records and must match to load.
PY = f"{sys.version_info[0]}.{sys.version_info[1]}"
#: Globals that payloads of earlier releases name (pack files keep their payloads' bytes:
#: 0.3.0.dev0's name of ``restore_sources``), and today's name of each. No import hook.
_OLD_GLOBALS = {
    ("specpack.carry.sources", "restore_sources"): ("specpack._pickled", "restore_sources"),
}


class _PayloadUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        module, name = _OLD_GLOBALS.get((module, name), (module, name))
        return super().find_class(module, name)


def loads_payload(payload: bytes) -> Any:
    """The object of a by-value payload (cloudpickle bytes), old global paths read as today's."""
    return _PayloadUnpickler(io.BytesIO(payload)).load()


class Blob(Carried):
    """An arbitrary object carried as a cloudpickle payload.

    Each :meth:`load` unpickles a fresh copy, so every env gets its own object.
    """

    __slots__ = ("_digest", "payload", "python", "type_name")

    payload: bytes
    type_name: str
    python: str
    _digest: str | None

    def __init__(self, payload: bytes, type_name: str, python: str = PY) -> None:
        self._set(payload=payload, type_name=type_name, python=python, _digest=None)

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore_blob, (self.payload, self.type_name, self.python))

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of the payload."""
        digest = self._digest or "sha256:" + hashlib.sha256(self.payload).hexdigest()
        self._set(_digest=digest)
        return digest

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Blob) and self.digest == other.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def _exact_key(self) -> tuple[Any, ...]:
        return ("o", self.digest)

    def __repr__(self) -> str:
        return f"Blob({self.type_name}, {len(self.payload)} bytes, {self.digest})"

    def load(self) -> Any:
        """A fresh copy of the carried object."""
        if self.python != PY:
            raise BuildError(
                f"a {self.type_name} value was carried by value under Python {self.python} and "
                f"cannot be loaded under Python {PY}; capture the pack again under Python {PY}"
            )
        try:
            return loads_payload(self.payload)
        except Exception as e:
            raise BuildError(
                f"cannot load a carried {self.type_name} value ({type(e).__name__}: {e})"
            ) from e


@dataclasses.dataclass(frozen=True, slots=True, repr=False)
class EnumRef(Carried):
    """An enum member read from a manifest, resolved (imported) only when materialised.

    Compared and hashed by module, qualname and member; ``allow`` is the policy of the file
    it was read from (what :meth:`load` may import), not part of the value.
    """

    module: str
    qualname: str
    member: str
    allow: tuple[str, ...] | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.allow is not None:
            object.__setattr__(self, "allow", tuple(self.allow))

    def __reduce__(self) -> tuple[Any, ...]:
        args = (self.module, self.qualname, self.member)
        return (restore_enum_ref, args if self.allow is None else (*args, self.allow))

    def _exact_key(self) -> tuple[Any, ...]:
        return ("e", self.module, self.qualname, self.member)

    def __repr__(self) -> str:
        return f"EnumRef({self.module}:{self.qualname}.{self.member})"

    def load(self) -> Any:
        """The enum member, importing its module (``"A|B"`` names a combination of flags)."""
        cls = resolve_reference(self.module, self.qualname, self.allow, enum_class=True)
        if not (isinstance(cls, type) and issubclass(cls, enum.Enum)):
            raise BuildError(
                f"{self.module}:{self.qualname} is not an enum class here, so it has no "
                f"member {self.member!r}"
            )
        try:
            if "|" in self.member and issubclass(cls, enum.Flag):
                return functools.reduce(operator.or_, (cls[p] for p in self.member.split("|")))
            return cls[self.member]
        except KeyError:
            raise BuildError(
                f"the enum {self.module}:{self.qualname} has no member {self.member!r} here"
            ) from None


@restorer
def restore_blob(payload: bytes, type_name: str, python: str) -> Blob:
    return Blob(payload, type_name, python)


@restorer
def restore_enum_ref(module: str, qualname: str, member: str,
                     allow: tuple[str, ...] | None = None) -> EnumRef:
    return EnumRef(module, qualname, member, allow)
