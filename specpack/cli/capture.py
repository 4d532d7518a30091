"""``specpack capture``: resolve a registered env id here and write its pack file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._text import size_text
from ..errors import CaptureError, PackFormatError
from .output import EXIT_OK, warn
from .packfile import read_key, run_imports

if TYPE_CHECKING:
    from ..pack import SpecPack

__all__ = ["command", "parse_kwarg", "unimportable_references"]


def command(ns: argparse.Namespace) -> int:
    """Import the ``--import`` modules, capture ``ns.id``, warn about references a fresh
    interpreter cannot import, and write the file (signed with ``--key-file``)."""
    from .._capture import capture
    from ..files import dump

    run_imports(ns)
    kwargs = dict(parse_kwarg(item) for item in ns.kwargs)
    key = read_key(ns.key_file)
    pack = capture(
        ns.id,
        max_episode_steps=ns.max_episode_steps,
        disable_env_checker=ns.disable_env_checker,
        backend=ns.backend,
        by_value=ns.by_value,
        **kwargs,
    )
    missing = unimportable_references(pack)
    if missing:
        how = "with --by-reference " if ns.by_value is False else ""
        warn(
            f"{ns.id}: captured {how}as references to {', '.join(map(repr, missing))}, which "
            "a fresh interpreter cannot import (not installed, not on PYTHONPATH: e.g. loaded "
            "from a .py path or found in the working directory); 'specpack run'/'verify' and "
            "specpack.load of this file in another process or directory will fail; capture "
            "with --by-value to carry the code in the file"
        )
    out = Path(ns.output)
    dump(pack, out, key=key)
    signed = ", signed" if key is not None else ""
    print(f"wrote {out} ({size_text(out.stat().st_size)}{signed}): {pack!r}")
    print(f"fingerprint {pack.fingerprint}")
    for note in pack.notes:
        print(f"note: {note}")
    return EXIT_OK


def unimportable_references(pack: SpecPack) -> list[str]:
    """The modules the pack refers to by name that a fresh interpreter could not import."""
    from ..carry.code import CodeRef
    from ..carry.importable import fresh_importable

    modules = {
        ref.module for ref in pack.carried()
        if isinstance(ref, CodeRef) and not ref.by_value and not fresh_importable(ref.module)
    }
    return sorted(modules)


def parse_kwarg(item: str) -> tuple[str, Any]:
    """``KEY=JSON`` -> ``(key, value)``; typed tags (``$tuple``, ``$ndarray``...) decoded."""
    key, sep, raw = item.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise CaptureError(
            f"--kwarg {item!r} is not of the form KEY=JSON (e.g. --kwarg gravity=9.8, "
            "--kwarg title='\"text\"')"
        )
    try:
        node = json.loads(raw)
    except ValueError:
        raise CaptureError(
            f"--kwarg {key}: {raw!r} is not JSON; quote strings (--kwarg {key}='\"{raw}\"'), "
            "write booleans as true/false and None as null"
        ) from None
    from ..carry.values import materialize
    from ..typedjson.decode import Decoder

    try:
        value = Decoder({}, f"--kwarg {key}").value(node, key)
        return key, materialize(value)
    except PackFormatError as e:
        raise CaptureError(str(e)) from None
