"""A pack's state as data: what it pickles as, what its fingerprint digests, and back.

Everything here follows the one field list of :class:`~specpack.SpecPack` (its dataclass
fields): the pickled state is the fingerprint followed by each field's state in field order
(:data:`TO_STATE` says how a field is stored when not as itself, :data:`FROM_STATE` how it
is read back), and :func:`content` is the typed JSON of the fields that shape the env.
A pickle is a message between processes of one specpack version (Ray, multiprocessing,
joblib): it carries :data:`FORMAT_VERSION` and the specpack version that made it, and
:func:`from_state` refuses any other (:class:`~specpack.PackFormatError` naming
``specpack.dump``/``specpack.load``, the stored format). Nothing here imports the pack
module: it works on :class:`~specpack._core._packvalue.PackValue`, and
:func:`~specpack._core._pack.restore_pack` passes its class in.
A pack's fingerprint and pickled state are computed once and kept beside it (:func:`fingerprint`,
:func:`reduced`): never in its fields, so they change nothing of the pack.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ._beside import Beside
from ._carry.ref import code_ref_from_state
from ._carry.tree import pickle_exact
from ._errors import PackFormatError
from ._layer import Layer
from ._version import __version__

if TYPE_CHECKING:
    from ._packvalue import PackValue
    from ._typedjson.encode import Encoder

__all__ = ["FORMAT_VERSION", "content", "fields", "fingerprint", "fingerprint_of", "from_state",
           "reduced", "state_of"]

#: Version of a pickled pack's layout (1: specpack 0.1; 2: 0.2, builtins led by the
#: fingerprint; 3: 0.3.0.dev0, format 2 followed by ``requires``, ``assets`` and ``seal``;
#: 4: format 3 with the specpack version that pickled it; 5: format 4 with the assets and the
#: seal pickled as themselves, so unpickling loads their classes only when a pack carries them;
#: 6: format 5 with the fingerprint as the 32 bytes of its SHA-256, 41 bytes fewer than its text).
#: Only this one is read, and only from the same specpack version. The JSON manifest has its own version
#: (``fileformat.manifest.FORMAT``), and every pack file ever written keeps loading.
FORMAT_VERSION = 6
#: How a fingerprint's text begins (:func:`fingerprint_of`); the pickled state holds the rest as
#: the digest's bytes.
_SHA256 = "sha256:"

#: What a pickle of a pack from another specpack version (or format) is told to use instead.
_USE_FILES = ("pickles are messages between processes of one specpack version; to store a pack "
              "or move it between versions, use specpack.dump(pack, path) and "
              "specpack.load(path)")


#: A pack class (:class:`~specpack.SpecPack`, passed in: this module sits below the pack's).
_Pack = TypeVar("_Pack", bound="PackValue")

_FIELDS: dict[type, tuple[str, ...]] = {}


def fields(cls: type[PackValue]) -> tuple[str, ...]:
    """The pack's constructor fields, in declaration order (the pickled state's order).

    Parameters
    ----------
    cls
        :class:`~specpack.SpecPack` (passed in: this module sits below the pack's).
    """
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.init)
    return names


#: How a field is stored in the pickled state, when not as itself. The assets and the seal are
#: stored as themselves: each pickles through :mod:`specpack._pickled`, so unpickling imports
#: their classes only when a pack carries them.
TO_STATE: dict[str, Callable[[Any], Any]] = {
    "entry_point": lambda ref: ref._state(),
    "spec": lambda spec: pickle_exact(dict(spec)),
    "layers": lambda layers: tuple((la.cls._state(), pickle_exact(la._kwargs)) for la in layers),
    "versions": dict,
    "_requires": dict,
    "assets": tuple,
}

#: How a stored field is read back, when not as itself.
FROM_STATE: dict[str, Callable[[Any], Any]] = {
    "entry_point": code_ref_from_state,
    "layers": lambda layers: tuple(Layer(code_ref_from_state(c), kw) for c, kw in layers),
}


def state_of(pack: PackValue) -> tuple[Any, ...]:
    """The pickled state of ``pack``: its fingerprint (the digest's bytes), then each field's
    state in order."""
    out: list[Any] = [bytes.fromhex(fingerprint(pack).removeprefix(_SHA256))]
    for name in fields(type(pack)):
        if name == "_kwargs":
            value: Any = pack._kwargs if pack._plain else pickle_exact(pack._kwargs)
        else:
            value = getattr(pack, name)
        convert = TO_STATE.get(name)
        out.append(value if convert is None else convert(value))
    return tuple(out)


#: Each live pack's fingerprint and the arguments of its restore (format, state), kept beside
#: it: a pack read from a pickle keeps the fingerprint and state it was sent with (a worker
#: never loads the typed-JSON codec to digest it again).
_fingerprints: Beside[str] = Beside()
_reduced: Beside[tuple[int, str, tuple[Any, ...]]] = Beside()


def fingerprint(pack: PackValue) -> str:
    """``pack.fingerprint``: :func:`fingerprint_of`, computed once per pack."""
    fp = _fingerprints.get(pack)
    return fp if fp is not None else _fingerprints.put(pack, fingerprint_of(pack))


def reduced(pack: PackValue) -> tuple[int, str, tuple[Any, ...]]:
    """The arguments of ``pack``'s restore: ``(FORMAT_VERSION, __version__, state_of(pack))``,
    made once."""
    args = _reduced.get(pack)
    if args is None:
        args = _reduced.put(pack, (FORMAT_VERSION, __version__, state_of(pack)))
    return args


def _written_by(fmt: Any, args: tuple[Any, ...]) -> str:
    """Which specpack pickled a pack of format ``fmt`` with restore arguments ``args``."""
    if fmt == 1:
        return "specpack 0.1 (pack format 1)"
    if fmt in (2, 3):
        return f"specpack {'0.2' if fmt == 2 else '0.3.0.dev0 or earlier'} (pack format {fmt})"
    if args and isinstance(args[0], str):
        return f"specpack {args[0][:40]} (pack format {fmt!r:.20})"
    return f"another specpack (pack format {fmt!r:.20})"


def from_state(cls: type[_Pack], fmt: Any, *args: Any) -> _Pack:
    """The pack of a pickle's restore arguments (:func:`reduced`) made by this very version.

    Parameters
    ----------
    cls
        :class:`~specpack.SpecPack` (passed in: this module sits below the pack's).
    fmt
        The pickle's layout: :data:`FORMAT_VERSION`, else refused.
    args
        The specpack version that pickled it (this one, else refused) and the state
        (:func:`state_of`).

    Raises
    ------
    PackFormatError
        The pickle was made by another specpack version or format; the message names both
        versions and says to use ``specpack.dump``/``specpack.load``.
    """
    if fmt != FORMAT_VERSION or len(args) != 2 or args[0] != __version__:
        raise PackFormatError(
            f"this pickle holds a pack pickled by {_written_by(fmt, args)}, but this is "
            f"specpack {__version__} (pack format {FORMAT_VERSION}): {_USE_FILES}")
    state: tuple[Any, ...] = args[1]
    if type(state) is not tuple or not state or type(state[0]) is not bytes or len(state[0]) != 32:
        raise PackFormatError(f"this pickle of a pack holds no readable state: {_USE_FILES}")
    given = {}
    for name, value in zip(fields(cls), state[1:]):
        convert = FROM_STATE.get(name)
        given[name] = value if convert is None else convert(value)
    pack = cls(**given)  # a new pack for every restore: equal, never shared
    _fingerprints.put(pack, _SHA256 + state[0].hex())
    _reduced.put(pack, (fmt, args[0], state))  # as sent: pickling again gives its bytes
    return pack


def content(pack: PackValue, enc: Encoder) -> dict[str, Any]:
    """The fields that shape the env, as typed JSON (the fingerprint's and manifest's body).

    ``vector`` appears only for a vector-only pack, so that every other pack keeps the
    fingerprint it had before the field existed.
    """
    body = {
        "backend": pack.backend,
        "id": pack.id,
        "entry_point": enc.value(pack.entry_point, 0),
        "kwargs": enc.value(pack._kwargs, 0),
        "spec": enc.value(dict(pack.spec), 0),
        "layers": [
            {"class": enc.value(layer.cls, 0), "kwargs": enc.value(layer._kwargs, 0)}
            for layer in pack.layers
        ],
        "render_wrappers": "make" if pack.auto_render else None,
    }
    if pack.vector:
        body["vector"] = True
    return body


def fingerprint_of(pack: PackValue) -> str:
    """``sha256:`` of the canonical typed JSON of :func:`content` (and the assets' digests)."""
    # lazy: a worker that unpickles a pack (fingerprint carried) and builds never needs it
    from ._typedjson.encode import Encoder, canonical_json

    body = content(pack, Encoder(None, canonical=True))
    if pack.assets:  # the files' bytes shape the env; absent: the old fingerprints
        body["assets"] = [[a.path, a.kind, a.sha256] for a in pack.assets]
    try:
        text = canonical_json(body)
    except RecursionError:
        raise PackFormatError("the pack's values are nested too deeply to fingerprint") from None
    return _SHA256 + hashlib.sha256(text.encode("ascii")).hexdigest()
