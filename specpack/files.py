"""Pack files: write a pack's manifest to disk, optionally signed; load it back safely.

A pack file is the typed JSON manifest (``pack.to_json()``, see ``docs/file-format.md``) as
UTF-8. A *signed* file puts one header line in front of those same bytes::

    specpack-signed/1 alg=hmac-sha256 key-id=<16 hex> sig=<64 hex>\\n
    { ...manifest... }

``sig`` is HMAC-SHA256, under the key, of every other byte of the file: the header without
its `` sig=...`` part, then the manifest bytes exactly as stored. So any changed byte (in
the manifest, the key id, the header or the signature) fails verification.

Loading never imports a module and never unpickles anything: references stay lazy until
``make()``, by-value payloads stay bytes. A file that carries by-value payloads (code or
pickled objects) is refused with :class:`~specpack.errors.UntrustedPackError` unless you
pass ``trust=True`` or the file verifies with ``key``. What that protects and what it does
not is in ``docs/security.md``.

Example::

    specpack.dump(pack, "cartpole.specpack")
    pack = specpack.load("cartpole.specpack")                  # by-reference code only
    specpack.dump(pack, "mine.specpack", key=KEY)
    pack = specpack.load("mine.specpack", key=KEY)              # by-value code, signed by us
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Union

from . import codec
from .errors import PackFormatError, SignatureError, SpecPackError, UntrustedPackError

if TYPE_CHECKING:
    from .pack import SpecPack

__all__ = ["describe", "dump", "key_id", "load"]

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

#: Version of the signed-file layout (the ``/1`` in the header).
SIGNED_VERSION = 1
_ALG = b"hmac-sha256"
_PREFIX = b"specpack-signed/1 alg=hmac-sha256 key-id="
_HEADER = re.compile(rb"specpack-signed/1 alg=hmac-sha256 key-id=([0-9a-f]{16}) sig=([0-9a-f]{64})\n")
_HEADER_MAX = len(_PREFIX) + 16 + 5 + 64 + 1
_MAX_FILE = 1 << 31


# -- keys and signatures ----------------------------------------------------------------------


def _check_key(key: Any) -> bytes | None:
    if key is None:
        return None
    if isinstance(key, (bytes, bytearray, memoryview)):
        k = bytes(key)
        if not k:
            raise SignatureError("key is empty; use a random secret of 32 bytes or more "
                                 "(e.g. secrets.token_bytes(32))")
        return k
    raise SignatureError(
        f"key must be bytes, got {type(key).__name__}"
        + ("; encode it (key.encode()) or read it from a file in binary mode"
           if isinstance(key, str) else "")
    )


def key_id(key: bytes) -> str:
    """The 16-hex-digit id of ``key`` written into signed files (a hint, not a secret check).

    It is derived with HMAC, so it does not reveal the key; it lets ``load`` tell "signed with
    another key" from "altered after signing".
    """
    k = _check_key(key)
    assert k is not None
    return hmac.new(k, b"specpack key id", hashlib.sha256).hexdigest()[:16]


def _signed_message(kid: bytes, manifest: bytes) -> bytes:
    return _PREFIX + kid + b"\n" + manifest


def _sign(key: bytes, manifest: bytes) -> bytes:
    kid = key_id(key).encode("ascii")
    sig = hmac.new(key, _signed_message(kid, manifest), hashlib.sha256).hexdigest()
    return _PREFIX + kid + b" sig=" + sig.encode("ascii") + b"\n" + manifest


class _File:
    """A pack file split into its parts (nothing parsed beyond the signature header)."""

    __slots__ = ("header_error", "kid", "manifest", "raw", "sig", "source")

    def __init__(self, source: str, raw: bytes) -> None:
        self.source = source
        self.raw = raw
        self.kid: bytes | None = None
        self.sig: bytes | None = None
        self.header_error: str | None = None
        self.manifest = raw
        if raw.startswith(codec.SIGNED_MAGIC):
            m = _HEADER.match(raw, 0, _HEADER_MAX)
            if m is None:
                line = raw[:_HEADER_MAX].partition(b"\n")[0]
                self.header_error = (
                    f"the signature line is malformed ({line[:120]!r}); expected "
                    "'specpack-signed/1 alg=hmac-sha256 key-id=<16 hex> sig=<64 hex>'"
                )
                self.manifest = b""
            else:
                self.kid, self.sig = m.group(1), m.group(2)
                self.manifest = raw[m.end():]

    @property
    def signed(self) -> bool:
        return self.sig is not None or self.header_error is not None

    def verify(self, key: bytes) -> None:
        """Raise :class:`SignatureError` unless the file is signed with ``key`` and intact."""
        where = self.source
        if self.header_error is not None:
            raise SignatureError(f"{where}: {self.header_error}; the file was altered or is "
                                 "not a signed pack file")
        if self.sig is None or self.kid is None:
            raise SignatureError(
                f"{where}: the file is not signed, but a key was given; nothing signed it, so "
                "its origin is unknown. Sign it where it was made (specpack.dump(pack, path, "
                "key=K)), or load it without key (by-value code then needs trust=True)"
            )
        expected = hmac.new(key, _signed_message(self.kid, self.manifest),
                            hashlib.sha256).hexdigest().encode("ascii")
        if hmac.compare_digest(expected, self.sig):
            return
        mine = key_id(key)
        if self.kid.decode("ascii") != mine:
            raise SignatureError(
                f"{where}: signed with another key (key id {self.kid.decode('ascii')}; the "
                f"given key's id is {mine}), or the file was altered; refusing it"
            )
        raise SignatureError(
            f"{where}: the signature does not match: the file was altered after it was "
            "signed (any changed byte breaks it); refusing it"
        )


def _source(path: Any) -> str:
    try:
        return os.fsdecode(path)
    except TypeError:
        raise PackFormatError(f"expected a file path, got {type(path).__name__} "
                              f"{str(path)[:80]!r}") from None


def _read(path: Any) -> _File:
    source = _source(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_MAX_FILE + 1)
    except FileNotFoundError:
        raise PackFormatError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise PackFormatError(f"{source}: is a directory, not a pack file") from None
    except OSError as e:
        raise PackFormatError(f"{source}: cannot read it ({e.strerror or e})") from e
    if len(raw) > _MAX_FILE:
        raise PackFormatError(f"{source}: larger than {_MAX_FILE} bytes; not a pack file")
    if not raw.strip():
        raise PackFormatError(f"{source}: empty file (a pack file holds a JSON manifest)")
    return _File(source, raw)


# -- writing ----------------------------------------------------------------------------------


def dump(pack: SpecPack, path: PathLike, key: bytes | None = None) -> None:
    """Write ``pack`` to ``path`` as a pack file; with ``key`` (bytes) the file is signed.

    The file is the readable manifest of ``pack.to_json()``; signing puts an HMAC-SHA256
    header line in front, so that ``load(path, key=key)`` accepts by-value code in it and
    refuses the file if any byte changed. The write is atomic (a temporary file renamed into
    place). Example::

        specpack.dump(pack, "env.specpack", key=secrets_from_somewhere)
    """
    from .pack import SpecPack

    if not isinstance(pack, SpecPack):
        raise SpecPackError(f"dump() writes a SpecPack, got {type(pack).__name__}; make one "
                            "with specpack.capture(...)")
    k = _check_key(key)
    data = codec.manifest_bytes(pack)
    if k is not None:
        data = _sign(k, data)
    source = _source(path)
    tmp = f"{source}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
        os.replace(tmp, source)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise SpecPackError(f"cannot write the pack file {source} ({e.strerror or e}); check "
                            "the directory exists and is writable") from e


# -- reading ----------------------------------------------------------------------------------


def _payload_lines(data: dict[str, Any]) -> list[str]:
    uses = _payload_uses(data)
    lines = []
    for entry in codec.code_payloads(data):
        digest = entry["digest"]
        at = ", ".join(uses.get(digest, [])) or "not referenced"
        python = entry.get("python") or "unknown"
        lines.append(codec.printable(
            f"  - {entry.get('kind')} {entry.get('name')} at {at}: {entry.get('size')} bytes, "
            f"{digest}, cloudpickle for Python {python}", 600))
    return lines


def _payload_uses(data: dict[str, Any]) -> dict[str, list[str]]:
    """digest -> the manifest places that reference it (iterative walk)."""
    uses: dict[str, list[str]] = {}
    stack: list[tuple[Any, str]] = [(data.get(k), k) for k in
                                    ("layers", "spec", "kwargs", "entry_point")]
    while stack:
        node, where = stack.pop()
        if type(node) is dict:
            for tag in ("$code", "$object"):
                if type(node.get(tag)) is str:
                    uses.setdefault(node[tag], []).append(where)
            stack.extend((v, f"{where}.{k}") for k, v in node.items())
        elif type(node) is list:
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(node))
    return uses


def _untrusted(f: _File, data: dict[str, Any]) -> UntrustedPackError:
    lines = _payload_lines(data)
    if f.sig is not None and f.kid is not None:
        how = (f"The file is signed (key id {f.kid.decode('ascii')}) but no key was given: "
               "pass key=K to check it, or trust=True")
    else:
        how = ("Pass trust=True only if you trust whoever made the file, or have it signed "
               "(specpack.dump(pack, path, key=K)) and load with key=K")
    return UntrustedPackError(
        f"{f.source}: carries {len(lines)} by-value payload(s), which make() would unpickle "
        "and so run:\n" + "\n".join(lines)
        + f"\nNothing was unpickled. {how}. `specpack inspect {f.source}` shows the whole file."
    )


def load(
    path: PathLike,
    trust: bool = False,
    key: bytes | None = None,
    allow: Iterable[str] | str | None = None,
) -> SpecPack:
    """Read a pack file written by :func:`dump`; nothing in it is imported or unpickled now.

    - A file without by-value payloads loads as it is.
    - A file with by-value payloads (code or pickled objects) raises
      :class:`~specpack.errors.UntrustedPackError` listing each payload, unless
      ``trust=True`` or the file verifies with ``key``.
    - With ``key`` (bytes), the file must be signed with that key and byte-for-byte intact,
      else :class:`~specpack.errors.SignatureError` (also with ``trust=True``).
    - ``allow=["my_pkg", ...]`` refuses, before anything is imported, a file naming code by
      reference outside those modules (``make()``'s own wrappers are always allowed).

    Malformed files raise :class:`~specpack.errors.PackFormatError` naming the file and the
    reason. Example::

        pack = specpack.load("env.specpack", key=KEY, allow=["my_pkg"])
        env = pack.make()
    """
    k = _check_key(key)
    f = _read(path)
    verified = False
    if k is not None:
        f.verify(k)
        verified = True
    elif f.header_error is not None:
        raise PackFormatError(f"{f.source}: {f.header_error}")
    data = codec.parse_manifest(f.manifest, f.source)
    if allow is not None:
        codec.check_allowed(data, allow, f.source)
    if data["payloads"] and not (trust or verified):
        raise _untrusted(f, data)
    return codec.from_manifest(data, f.source)


def describe(path: PathLike, key: bytes | None = None) -> dict[str, Any]:
    """What a pack file holds, for ``specpack inspect``; nothing is imported or unpickled.

    Returns a JSON-able dict: ``path``, ``size``, ``format``, ``manifest`` (the parsed
    manifest, payload data left out), ``payloads`` (kind, name, size, digest, python,
    format, note, ``used_at``), ``modules`` (every code reference: ``where``, ``module``,
    ``qualname``), ``signature`` (``status``: ``"unsigned"``, ``"signed (not checked)"``,
    ``"valid"`` or ``"invalid"`` (with ``key``), plus ``alg``, ``key_id``, ``detail``),
    ``fingerprint`` (``recorded``, ``computed``, ``matches``: False after a hand edit) and
    ``needs_trust`` (whether ``load(path)`` without trust or key would refuse it).
    Raises :class:`~specpack.errors.PackFormatError` for a malformed file.
    """
    k = _check_key(key)
    f = _read(path)
    if f.header_error is not None:
        raise PackFormatError(f"{f.source}: {f.header_error}")
    data = codec.parse_manifest(f.manifest, f.source)
    signature: dict[str, Any]
    if not f.signed:
        signature = {"status": "unsigned"}
    else:
        assert f.kid is not None
        signature = {"status": "signed (not checked)", "alg": _ALG.decode(),
                     "key_id": f.kid.decode("ascii")}
        if k is not None:
            try:
                f.verify(k)
                signature.update(status="valid", detail="signed with the given key; intact")
            except SignatureError as e:
                signature.update(status="invalid", detail=str(e))
    if not f.signed and k is not None:
        signature["detail"] = "a key was given, but the file is not signed"
    uses = _payload_uses(data)
    payloads = []
    for entry in codec.code_payloads(data):
        summary = {kk: v for kk, v in entry.items() if kk != "data"}
        summary["used_at"] = uses.get(entry["digest"], [])
        payloads.append(summary)
    shown = dict(data)
    shown["payloads"] = {d: {kk: v for kk, v in e.items() if kk != "data"}
                         for d, e in data["payloads"].items()}
    pack = codec.from_manifest(data, f.source)
    recorded = data.get("fingerprint")
    return {
        "path": f.source,
        "size": len(f.raw),
        "format": data["format"],
        "manifest": shown,
        "payloads": payloads,
        "modules": [{"where": w, "module": m, "qualname": q}
                    for w, m, q in codec.named_modules(data)],
        "signature": signature,
        "fingerprint": {"recorded": recorded, "computed": pack.fingerprint,
                        "matches": recorded == pack.fingerprint},
        "needs_trust": bool(data["payloads"]),
    }
