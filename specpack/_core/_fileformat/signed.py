"""Signed pack files: ``specpack-signed/1 alg=hmac-sha256 key-id=<16 hex> sig=<64 hex>\\n``
in front of the manifest bytes, ``sig`` being the HMAC under the key (bytes, used exactly as
given) of every other byte of the file."""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

from .._errors import SignatureError

__all__ = ["MAX_KEY", "MIN_KEY_BYTES", "SIGNED_MAGIC", "SignedFile", "check_key", "key_id", "sign"]

#: First bytes of a signed pack file; a manifest never starts so.
SIGNED_MAGIC = b"specpack-signed/"
ALG = b"hmac-sha256"
_PREFIX = b"specpack-signed/1 alg=hmac-sha256 key-id="
_HEADER = re.compile(
    rb"specpack-signed/1 alg=hmac-sha256 key-id=([0-9a-f]{16}) sig=([0-9a-f]{64})\n")
_HEADER_MAX = len(_PREFIX) + 16 + 5 + 64 + 1
#: The longest key, for ``key=`` as for ``files.read_key`` (``--key-file``), so that every key
#: that signs a file can also be read from a file.
MAX_KEY = 1 << 20
#: The fewest bytes a signing key may have (HMAC-SHA256's output size): a signed file lets
#: anyone test guesses of the key offline.
MIN_KEY_BYTES = 32


def check_key(key: Any) -> bytes | None:
    if key is None:
        return None
    if isinstance(key, (bytes, bytearray, memoryview)):
        k = bytes(key)
        if not k:
            raise SignatureError("key is empty; use a random secret of 32 bytes or more "
                                 "(e.g. secrets.token_bytes(32))")
        if len(k) > MAX_KEY:
            raise SignatureError(f"key is {len(k):,} bytes, more than the {MAX_KEY:,} (1 MiB) a "
                                 "key may hold; use a random secret of 32 bytes or more "
                                 "(e.g. secrets.token_bytes(32))")
        return k
    raise SignatureError(
        f"key must be bytes, got {type(key).__name__}"
        + ("; encode it (key.encode()) or read it from a file in binary mode"
           if isinstance(key, str) else ""))


def key_id(key: bytes) -> str:
    """The 16-hex-digit id of ``key`` written into signed files (a hint, not a secret check).

    It is derived with HMAC, so it does not reveal the key; it lets ``load`` tell "signed with
    another key" from "altered after signing".
    """
    k = check_key(key)
    assert k is not None
    return hmac.new(k, b"specpack key id", hashlib.sha256).hexdigest()[:16]


def _signature(key: bytes, kid: bytes, manifest: bytes) -> bytes:
    """The HMAC of the header without `` sig=...`` and the manifest, in hex."""
    return hmac.new(key, _PREFIX + kid + b"\n" + manifest, hashlib.sha256).hexdigest().encode()


def sign(key: bytes, manifest: bytes) -> bytes:
    """``manifest`` behind a signature header made with ``key``; a key shorter than
    :data:`MIN_KEY_BYTES` raises :class:`SignatureError` (files signed with one before 0.3 still
    verify: only new signatures need a long key)."""
    if len(key) < MIN_KEY_BYTES:
        raise SignatureError(
            f"the signing key is {len(key)} byte{'s' if len(key) != 1 else ''}; a key "
            f"shorter than {MIN_KEY_BYTES} bytes can be guessed offline from any file it "
            "signs, so specpack refuses to sign with it.",
            python="Use a random key of 32 bytes or more: secrets.token_bytes(32)",
            cli="Use a random key of 32 bytes or more: head -c 32 /dev/urandom > pack.key "
            "(or secrets.token_bytes(32) in Python)")
    kid = key_id(key).encode("ascii")
    return _PREFIX + kid + b" sig=" + _signature(key, kid, manifest) + b"\n" + manifest


class SignedFile:
    """A pack file split into its parts (nothing parsed beyond the signature header)."""

    __slots__ = ("header_error", "kid", "manifest", "raw", "sig", "source")

    def __init__(self, source: str, raw: bytes) -> None:
        self.source = source
        self.raw = raw
        self.kid: bytes | None = None
        self.sig: bytes | None = None
        self.header_error: str | None = None
        self.manifest = raw
        if raw.startswith(SIGNED_MAGIC):
            m = _HEADER.match(raw, 0, _HEADER_MAX)
            if m is None:
                line = raw[:_HEADER_MAX].partition(b"\n")[0]
                self.header_error = (
                    f"the signature line is malformed ({line[:120]!r}); expected "
                    "'specpack-signed/1 alg=hmac-sha256 key-id=<16 hex> sig=<64 hex>'")
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
                "its origin is unknown.",
                python="Sign it where it was made (specpack.dump(pack, path, key=K)), or load "
                "it without key (by-value code then needs trust=True)",
                cli="Sign it where it was made (specpack capture ... --key-file PATH), or "
                "leave out --key-file (by-value code then needs --trust)")
        if hmac.compare_digest(_signature(key, self.kid, self.manifest), self.sig):
            return
        mine = key_id(key)
        if self.kid.decode("ascii") != mine:
            raise SignatureError(
                f"{where}: signed with another key (key id {self.kid.decode('ascii')}; the "
                f"given key's id is {mine}), or the file was altered; refusing it")
        raise SignatureError(
            f"{where}: the signature does not match: the file was altered after it was "
            "signed (any changed byte breaks it); refusing it")


