"""Minari: keep the pack in a dataset, so the env that made the data can be rebuilt anywhere
(``dataset.recover_environment()`` needs the env's registration, which a fresh interpreter may
lack): :func:`attach` stores it in the metadata, :func:`recover_environment` rebuilds from it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._core._errors import SpecPackError
from .._core._exact.describe import describe_space, same
from .._core._fileformat.signed import check_key, sign
from .._core._pack import SpecPack
from .._core._text import short

__all__ = ["METADATA_KEY", "attach", "recover_environment", "recover_pack"]

#: The dataset metadata key holding the pack's manifest.
METADATA_KEY = "specpack"


def _storage(dataset: Any) -> Any:
    storage = getattr(dataset, "storage", None)
    if storage is None or not hasattr(storage, "update_metadata"):
        raise SpecPackError(
            f"expected a minari.MinariDataset, got {type(dataset).__name__}; pass the dataset "
            "that DataCollector.create_dataset or minari.load_dataset returned"
        )
    return storage


def attach(dataset: Any, pack: SpecPack, *, key: bytes | None = None) -> None:
    """Store ``pack`` in ``dataset``'s metadata (under ``"specpack"``), signed with ``key``.

    Parameters
    ----------
    dataset
        A ``minari.MinariDataset`` (as ``DataCollector.create_dataset`` returns it).
    pack
        The pack of the env that collected the data.
    key
        An HMAC key (bytes): the stored manifest is signed, and :func:`recover_pack` with the
        same key accepts its by-value code. Without it, a pack carrying code by value needs
        ``trust=True`` to be recovered.

    Raises
    ------
    SpecPackError
        Not a dataset or not a pack, or the pack's recorded spaces differ from the dataset's
        (the pack is not the env that made this data).
    SignatureError
        ``key`` is not usable bytes.
    """
    storage = _storage(dataset)
    if not isinstance(pack, SpecPack):
        raise SpecPackError(f"attach() stores a SpecPack, got {type(pack).__name__}; make one "
                            "with specpack.capture(...)")
    k = check_key(key)
    surface = pack.surface
    for name in ("observation_space", "action_space") if surface is not None else ():
        theirs = getattr(dataset, name, None)
        mine = getattr(surface, name)
        if theirs is not None and not same(describe_space(theirs), describe_space(mine)):
            raise SpecPackError(
                f"attach(): pack {pack.label}'s {name} {short(mine)} is not the dataset's "
                f"{short(theirs)}; attach the pack of the env that collected this data"
            )
    text = pack.to_json(indent=None)
    if k is not None:
        text = sign(k, text.encode("utf-8", "surrogatepass")).decode("utf-8", "surrogatepass")
    storage.update_metadata({METADATA_KEY: text})


def recover_pack(dataset: Any, *, trust: bool = False, key: bytes | None = None,
                 allow: Iterable[str] | str | None = None) -> SpecPack:
    """The pack :func:`attach` stored in ``dataset`` (read as :meth:`SpecPack.from_json` reads).

    Parameters
    ----------
    dataset
        A ``minari.MinariDataset``.
    trust, key, allow
        As :meth:`SpecPack.from_json`: by-value code needs ``key`` (the one it was signed
        with) or ``trust=True``; ``allow`` limits the modules it may name.

    Returns
    -------
    SpecPack

    Raises
    ------
    SpecPackError
        The dataset holds no pack (the message says how to attach one).
    PackFormatError, UntrustedPackError, SignatureError
        As :meth:`SpecPack.from_json`.
    """
    metadata = _storage(dataset).metadata
    text = metadata.get(METADATA_KEY)
    if not isinstance(text, str):
        raise SpecPackError(
            f"dataset {short(metadata.get('dataset_id'))} holds no specpack manifest (no "
            f"{METADATA_KEY!r} metadata); store one where the data is collected: "
            "specpack.adapters.minari.attach(dataset, pack)"
        )
    source = f"dataset {short(metadata.get('dataset_id'))} metadata[{METADATA_KEY!r}]"
    return SpecPack.from_json(text, trust=trust, key=key, allow=allow, source=source)


def recover_environment(dataset: Any, *, trust: bool = False, key: bytes | None = None,
                        allow: Iterable[str] | str | None = None, **kwargs: Any) -> Any:
    """The env that collected ``dataset``, rebuilt from its stored pack in any interpreter:
    ``dataset.recover_environment()`` without the registry.

    Parameters
    ----------
    dataset
        A ``minari.MinariDataset`` with a pack stored by :func:`attach`.
    trust, key, allow
        As :func:`recover_pack`.
    **kwargs
        Merged over the captured constructor kwargs, as ``pack.make(**kwargs)``.

    Returns
    -------
    gymnasium.Env

    Raises
    ------
    SpecPackError
        As :func:`recover_pack`; a constructor failure as :class:`~specpack.BuildError`.
    """
    return recover_pack(dataset, trust=trust, key=key, allow=allow).make(**kwargs)
