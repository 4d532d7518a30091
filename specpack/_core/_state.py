"""A pack's state as data: what it pickles as, what its fingerprint digests, and back. Both
follow :class:`~specpack._core._packvalue.PackValue`'s field list (the pack's class is passed in:
nothing here imports the pack module) and are computed once per pack, kept beside it."""

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
from ._packvalue import PackValue
from ._version import __version__

if TYPE_CHECKING:
    from ._typedjson.encode import Encoder

__all__ = ["FORMAT_VERSION", "content", "fingerprint", "from_state", "reduced", "state_of"]

#: Version of a pickled pack's layout (1: specpack 0.1; 2: 0.2; 3: 0.3.0.dev0; 4: with the
#: specpack version; 5: assets and seal as themselves; 6: the fingerprint's 32 digest bytes). Only
#: this one is read, from the same specpack version: pack files have their own format.
FORMAT_VERSION = 6
#: How a fingerprint's text begins; the pickled state holds the rest as the digest's bytes.
_SHA256 = "sha256:"

#: What a pickle of a pack from another specpack version (or format) is told to use instead.
_USE_FILES = ("pickles are messages between processes of one specpack version; to store a pack "
              "or move it between versions, use specpack.dump(pack, path) and specpack.load(path)")

_Pack = TypeVar("_Pack", bound=PackValue)
#: A pack's constructor fields, in declaration order (the pickled state's order).
_FIELDS = tuple(f.name for f in dataclasses.fields(PackValue) if f.init)

#: How a pack's field is stored in the pickled state, when not as itself. The assets and the seal
#: pickle through :mod:`specpack._pickled`: their classes load only when a pack carries them.
_TO_STATE: dict[str, Callable[[Any], Any]] = {
    "entry_point": lambda p: p.entry_point._state(),
    "_kwargs": lambda p: p._kwargs if p._plain else pickle_exact(p._kwargs),
    "spec": lambda p: pickle_exact(dict(p.spec)),
    "layers": lambda p: tuple((la.cls._state(), pickle_exact(la._kwargs)) for la in p.layers),
    "versions": lambda p: dict(p.versions),
    "_requires": lambda p: dict(p._requires),
    "assets": lambda p: tuple(p.assets),
}

#: How a stored field is read back, when not as itself.
_FROM_STATE: dict[str, Callable[[Any], Any]] = {
    "entry_point": code_ref_from_state,
    "layers": lambda layers: tuple(Layer(code_ref_from_state(c), kw) for c, kw in layers),
}


def state_of(pack: PackValue) -> tuple[Any, ...]:
    """The pickled state: the fingerprint's digest bytes, then each field's state in order."""
    out: list[Any] = [bytes.fromhex(fingerprint(pack).removeprefix(_SHA256))]
    for name in _FIELDS:
        convert = _TO_STATE.get(name)
        out.append(getattr(pack, name) if convert is None else convert(pack))
    return tuple(out)


#: Each live pack's fingerprint and restore arguments: a pack read from a pickle keeps those it
#: was sent with (a worker never loads the typed-JSON codec to digest it again).
_fingerprints: Beside[str] = Beside()
_reduced: Beside[tuple[int, str, tuple[Any, ...]]] = Beside()


def fingerprint(pack: PackValue) -> str:
    """``pack.fingerprint``: ``sha256:`` of the canonical typed JSON of :func:`content` (and
    the assets' digests), computed once per pack."""
    fp = _fingerprints.get(pack)
    if fp is not None:
        return fp
    # lazy: a worker that unpickles a pack (fingerprint carried) and builds never needs it
    from ._typedjson.encode import Encoder, canonical_json

    body = content(pack, Encoder(None, canonical=True))
    if pack.assets:  # the files' bytes shape the env; absent: the old fingerprints
        body["assets"] = [[a.path, a.kind, a.sha256] for a in pack.assets]
    try:
        text = canonical_json(body)
    except RecursionError:
        raise PackFormatError("the pack's values are nested too deeply to fingerprint") from None
    return _fingerprints.put(pack, _SHA256 + hashlib.sha256(text.encode("ascii")).hexdigest())


def reduced(pack: PackValue) -> tuple[int, str, tuple[Any, ...]]:
    """The arguments of ``pack``'s restore, ``(FORMAT_VERSION, __version__, state)``, made once."""
    return _reduced.get(pack) or _reduced.put(pack, (FORMAT_VERSION, __version__, state_of(pack)))


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
    """The pack ``cls`` of :func:`reduced`'s arguments (``fmt``, specpack version, state);
    :class:`~specpack.PackFormatError` when another specpack version or format made them."""
    if fmt != FORMAT_VERSION or len(args) != 2 or args[0] != __version__:
        raise PackFormatError(
            f"this pickle holds a pack pickled by {_written_by(fmt, args)}, but this is "
            f"specpack {__version__} (pack format {FORMAT_VERSION}): {_USE_FILES}")
    state: tuple[Any, ...] = args[1]
    if type(state) is not tuple or not state or type(state[0]) is not bytes or len(state[0]) != 32:
        raise PackFormatError(f"this pickle of a pack holds no readable state: {_USE_FILES}")
    given = {name: _FROM_STATE[name](value) if name in _FROM_STATE else value
             for name, value in zip(_FIELDS, state[1:])}
    pack = cls(**given)  # a new pack for every restore: equal, never shared
    _fingerprints.put(pack, _SHA256 + state[0].hex())
    _reduced.put(pack, (fmt, args[0], state))  # as sent: pickling again gives its bytes
    return pack


def content(pack: PackValue, enc: Encoder) -> dict[str, Any]:
    """The fields that shape the env, as typed JSON (the fingerprint's and manifest's body);
    ``vector`` only when true, so other packs keep the fingerprint they had before it existed."""
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
