"""Pack files on disk: :func:`dump` (optionally signed), :func:`load` and :func:`describe`.

A pack file is the typed JSON manifest (``docs/file-format.md``) as UTF-8, optionally behind a
signature line (:mod:`._fileformat.signed`). Loading imports and unpickles nothing; by-value
payloads need ``trust=True`` or a verifying ``key`` (``docs/security.md``).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from contextlib import suppress
from typing import Any, Union

from ._assets_tree import kind_of
from ._errors import PackFormatError, SignatureError, SpecPackError, file_error_for
from ._fileformat.manifest import code_payloads, decode_fields, parse_manifest
from ._fileformat.signed import ALG, MAX_KEY, SignedFile, check_key, key_id, sign
from ._fileformat.trust import named_modules, payload_uses
from ._keywords import check_flag, checked_keywords
from ._pack import SpecPack

__all__ = ["describe", "dump", "key_id", "load", "read_key"]

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

_MAX_FILE = 1 << 31


@checked_keywords
def read_key(path: PathLike) -> bytes:
    """The HMAC key held in the file ``path``: all its bytes, exactly (nothing stripped).

    The CLI's ``--key-file`` reads keys with it too. Write one with e.g.
    ``head -c 32 /dev/urandom > pack.key``; a file over 1 MiB is refused, never cut short.
    """
    source = _source(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_KEY + 1)
    except OSError as e:
        raise file_error_for(e, f"{source}: cannot read the key file ({e.strerror or e})",
                             source) from e
    if not data:
        raise SignatureError(f"{source}: the key file is empty; put the HMAC key in it")
    if len(data) > MAX_KEY:
        raise SignatureError(f"{source}: the key file holds more than {MAX_KEY:,} bytes (1 MiB), "
                             "the most a key may hold; is it the key file? A key is a random "
                             "secret of 32 bytes or more (head -c 32 /dev/urandom > pack.key)")
    return data


def _source(path: Any) -> str:
    try:
        return os.fsdecode(path)
    except TypeError:
        raise PackFormatError(f"expected a file path, got {type(path).__name__} "
                              f"{str(path)[:80]!r}") from None


def _read(path: Any) -> SignedFile:
    """The bytes of the pack file at ``path``, which must be a regular file: a FIFO or device
    could block forever, so it is refused before the open (opening some devices acts on them),
    the open does not block, and ``os.fstat`` refuses one swapped in between."""
    source = _source(path)
    try:
        _check_regular(os.stat(path).st_mode, source)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
        with open(fd, "rb", closefd=True) as fh:
            _check_regular(os.fstat(fd).st_mode, source)
            raw = _read_bounded(fh, source)
    except SpecPackError:
        raise  # refused by _check_regular or _read_bounded, already named
    except MemoryError:
        raise PackFormatError(f"{source}: too large to read in the memory available") from None
    except FileNotFoundError as e:
        raise file_error_for(e, f"{source}: no such file", source) from None
    except OSError as e:
        raise file_error_for(e, f"{source}: cannot read it ({e.strerror or e})", source) from e
    if not raw.strip():
        raise PackFormatError(f"{source}: empty file (a pack file holds a JSON manifest)")
    return SignedFile(source, raw)


def _check_regular(mode: int, source: str) -> None:
    """Refuse (:class:`PackFormatError`) a ``stat`` mode that is not a regular file's."""
    if stat.S_ISREG(mode):
        return
    what = "a directory" if stat.S_ISDIR(mode) else kind_of(mode, "not a regular file")
    message = (f"{source}: is {what}, not a pack file; a pack file is a regular file "
               "(written by specpack.dump): give its path")
    if stat.S_ISDIR(mode):
        raise file_error_for(errno.EISDIR, message, source)
    raise PackFormatError(message)


def _read_bounded(fh: Any, source: str) -> bytes:
    """The bytes of ``fh``, at most ``_MAX_FILE``, in chunks: ``fh.read(n)`` allocates ``n``
    bytes up front, which fails under an address-space limit."""
    size = os.fstat(fh.fileno()).st_size
    chunks = []
    total = 0
    while total <= _MAX_FILE and size <= _MAX_FILE:
        chunk = fh.read(min(max(size + 1 - total, 1 << 16), _MAX_FILE + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if size > _MAX_FILE or total > _MAX_FILE:
        raise PackFormatError(f"{source}: larger than {_MAX_FILE} bytes; not a pack file")
    return b"".join(chunks)


@checked_keywords
def dump(pack: SpecPack, path: PathLike, *, key: bytes | None = None) -> None:
    """Write ``pack`` to ``path`` as a pack file; with ``key`` (bytes) the file is signed.

    The file is the manifest of ``pack.to_json()``, written atomically; signing puts an
    HMAC-SHA256 line in front, so ``load(path, key=key)`` accepts by-value code in it and
    refuses the file if any byte changed. Example::

        specpack.dump(pack, "env.specpack", key=secrets_from_somewhere)
    """
    if not isinstance(pack, SpecPack):
        raise SpecPackError(f"dump() writes a SpecPack, got {type(pack).__name__}; make one "
                            "with specpack.capture(...)")
    k = check_key(key)
    data = (pack.to_json(indent=2) + "\n").encode("utf-8")  # dumps escapes lone surrogates
    if k is not None:
        data = sign(k, data)
    source = _source(path)
    tmp = f"{source}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
        os.replace(tmp, source)
    except OSError as e:
        with suppress(OSError):
            os.unlink(tmp)
        raise file_error_for(e, f"cannot write the pack file {source} ({e.strerror or e}); "
                             "check the directory exists and is writable", source) from e


@checked_keywords
def load(path: PathLike, *, trust: bool = False, key: bytes | None = None,
         allow: Iterable[str] | str | None = None) -> SpecPack:
    """Read a pack file written by :func:`dump`; nothing in it is imported or unpickled now.

    Parameters
    ----------
    path
        The pack file.
    trust
        Accept by-value payloads (code or pickled objects, run when ``make()`` loads them)
        without a signature: only for files you trust. Exactly ``True`` or ``False`` (else
        :class:`~specpack.ArgumentTypeError`).
    key
        The HMAC key (bytes): the file must be signed with it and intact, else
        :class:`~specpack.SignatureError` (also with ``trust=True``).
    allow
        Module names (``["my_pkg"]``) and exact references (``"my_pkg.envs:make_env"``):
        refuse a file naming code by reference outside them; at ``make()`` a module admits
        only the env and wrapper classes defined in it and values, a callable only by its
        exact entry (``make()``'s own wrappers always; see ``docs/security.md``).

    Raises
    ------
    PackFileError
        The file cannot be read: also the matching ``OSError`` (``FileNotFoundError``,
        ``IsADirectoryError``, ``PermissionError``) with ``errno`` and ``filename`` set.
    PackFormatError
        The file is malformed (the message names the file and the field).
    UntrustedPackError
        By-value payloads without trust or key, or references outside ``allow``.
    SignatureError
        The key does not verify the file.

    Example::

        pack = specpack.load("env.pack", key=KEY, allow=["my_pkg"])
        env = pack.make()
    """
    check_flag(trust, "trust", "specpack.load()")
    f = _read(path)
    try:
        return SpecPack.from_json(f.raw, source=f.source, trust=trust, key=key, allow=allow)
    except (MemoryError, RecursionError) as e:
        raise _exhausted(f.source, e) from None


def _exhausted(source: str, e: BaseException) -> PackFormatError:
    what = "memory" if isinstance(e, MemoryError) else "stack"
    return PackFormatError(f"{source}: reading it ran out of {what} ({type(e).__name__}); it "
                           "is too large or nested too deeply")


@checked_keywords
def describe(path: PathLike, key: bytes | None = None) -> dict[str, Any]:
    """What a pack file holds, for ``specpack inspect``; nothing is imported or unpickled, and
    the cost is linear in the file's size.

    Parameters
    ----------
    path
        The pack file.
    key
        Check the signature with this key (the result says ``valid`` or ``invalid``; no
        exception for a wrong key).

    Returns
    -------
    dict
        A JSON-able dict: ``path``, ``size``, ``format``, ``manifest`` (parsed; payload data
        and carried bytes left out), ``payloads`` (kind, name, size, digest, python, format,
        note, ``used_at``), ``modules`` (every code reference: ``where``, ``module``,
        ``qualname``), ``signature`` (``status``: ``"unsigned"``, ``"signed (not checked)"``,
        ``"valid"`` or ``"invalid"``, plus ``alg``, ``key_id``, ``detail``), ``fingerprint``
        (``recorded``, ``computed``, ``matches``: False after a hand edit) and ``needs_trust``
        (whether ``load(path)`` without trust or key would refuse it). **Strings are raw**,
        control characters included: escape them before printing
        (``json.dumps(desc, ensure_ascii=True)``, as ``specpack inspect`` does).

    Raises
    ------
    PackFileError
        The file cannot be read (also the matching ``OSError``, as for :func:`load`).
    PackFormatError
        A malformed file (the message names the file and the field).
    SignatureError
        ``key`` is not bytes.
    """
    k = check_key(key)
    f = _read(path)
    try:
        return _describe(f, k)
    except (MemoryError, RecursionError) as e:
        raise _exhausted(f.source, e) from None


def _describe(f: SignedFile, k: bytes | None) -> dict[str, Any]:
    if f.header_error is not None:
        raise PackFormatError(f"{f.source}: {f.header_error}")
    data = parse_manifest(f.manifest, f.source)
    signature: dict[str, Any] = {"status": "unsigned"}
    if f.signed:
        assert f.kid is not None
        signature = {"status": "signed (not checked)", "alg": ALG.decode(),
                     "key_id": f.kid.decode("ascii")}
        if k is not None:
            try:
                f.verify(k)
                signature.update(status="valid", detail="signed with the given key; intact")
            except SignatureError as e:
                signature.update(status="invalid", detail=str(e))
    elif k is not None:
        signature["detail"] = "a key was given, but the file is not signed"
    pack = SpecPack(**decode_fields(data, f.source))

    def no_data(entry: dict[str, Any]) -> dict[str, Any]:
        return {name: v for name, v in entry.items() if name != "data"}

    uses = payload_uses(data)
    payloads = [{**no_data(e), "used_at": uses.get(e["digest"], [])} for e in code_payloads(data)]
    shown = {**data, "payloads": {d: no_data(e) for d, e in data["payloads"].items()}}
    if isinstance(data.get("assets"), list):  # carried bytes left out, as payloads' are
        shown["assets"] = [no_data(e) if isinstance(e, dict) else e for e in data["assets"]]
    recorded = data.get("fingerprint")
    return {
        "path": f.source,
        "size": len(f.raw),
        "format": data["format"],
        "manifest": shown,
        "payloads": payloads,
        "modules": [{"where": w, "module": m, "qualname": q}
                    for w, m, q in named_modules(data, f.source)],
        "signature": signature,
        "fingerprint": {"recorded": recorded, "computed": pack.fingerprint,
                        "matches": recorded == pack.fingerprint},
        "needs_trust": bool(data["payloads"]),
    }
