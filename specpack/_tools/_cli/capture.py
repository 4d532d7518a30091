"""``specpack capture``: resolve a registered env id (or an entry point) and write its pack
file (with ``--self-contained``, ``--asset`` and ``--seal``, one ``check`` accepts elsewhere)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..._core._capture import capture
from ..._core._carry.code import CodeRef
from ..._core._carry.importable import fresh_importable
from ..._core._carry.values import materialize
from ..._core._errors import CaptureError, PackFormatError
from ..._core._text import printable, size_text, suggest
from ..._core._typedjson.decode import Decoder
from ...files import dump
from .._imports import import_targets
from .._seal import seal as sealed_copy
from .output import EXIT_OK, spinner, stdout_to_stderr, warn
from .packfile import read_key, run_imports

__all__ = ["command", "entry_point", "parse_kwarg"]

_OPTION = "--entry-point"


def entry_point(text: str) -> Any:
    """The object ``--entry-point MODULE:QUALNAME`` names: the module imported as ``--import``
    imports it, then the dotted qualname looked up in it (a did-you-mean when it is not)."""
    module_name, sep, qualname = text.rpartition(":")
    if not sep or not module_name or not all(p.isidentifier() for p in qualname.split(".")):
        raise CaptureError(
            f"{_OPTION} {printable(text, 120)!r}: expected MODULE:CLASS, e.g. "
            "my_envs:AntEnv or envs/ant_envs.py:AntEnv"
        )
    (imported,) = import_targets([module_name], option=_OPTION)
    obj: Any = sys.modules[imported]
    for i, part in enumerate(qualname.split(".")):
        if not hasattr(obj, part):
            where = ".".join([imported, *qualname.split(".")[:i]])
            names = [n for n in dir(obj) if not n.startswith("_")]
            raise CaptureError(
                f"{_OPTION} {printable(text, 120)}: {where} has no attribute {part!r};"
                f"{suggest(part, names)}"
            )
        obj = getattr(obj, part)
    return obj


def command(ns: argparse.Namespace) -> int:
    """Capture ``ns.id`` (or ``--entry-point``), warn about unimportable references, write."""
    if (ns.id is None) == (ns.entry_point is None):
        raise CaptureError(
            "give either an env ID (e.g. specpack capture CartPole-v1 -o cartpole.pack) or "
            "--entry-point MODULE:CLASS"
            + (", not both" if ns.id is not None else "")
        )
    seal = getattr(ns, "seal", None)
    seed = getattr(ns, "seed", None)
    if seed is not None and seal is None:
        raise CaptureError(f"--seed {seed}: the seed of the sealed rollout; add --seal STEPS")
    if seal is not None and seal < 1:
        raise CaptureError(f"--seal {seal}: the sealed rollout's steps must be 1 or more")
    run_imports(ns)
    kwargs = dict(parse_kwarg(item) for item in ns.kwargs)
    key = read_key(ns.key_file)
    target = ns.id if ns.entry_point is None else entry_point(ns.entry_point)
    name = ns.id or ns.entry_point
    pack = capture(
        target,
        max_episode_steps=ns.max_episode_steps,
        disable_env_checker=ns.disable_env_checker,
        backend=ns.backend,
        by_value=ns.by_value,
        env_kwargs=kwargs,
        assets=list(getattr(ns, "assets", None) or []),
        self_contained=bool(getattr(ns, "self_contained", False)),
    )
    missing = sorted({ref.module for ref in pack.carried() if isinstance(ref, CodeRef)
                      and not ref.by_value and not fresh_importable(ref.module)})
    if missing:  # references a fresh interpreter could not import
        how = "with --by-reference " if ns.by_value is False else ""
        warn(
            f"{name}: captured {how}as references to {', '.join(map(repr, missing))}, which "
            "a fresh interpreter cannot import (not installed, not on PYTHONPATH: e.g. loaded "
            "from a .py path or found in the working directory); 'specpack run'/'verify' and "
            "specpack.load of this file in another process or directory will fail; capture "
            "with --by-value to carry the code in the file"
        )
    if seal is not None:
        with spinner(f"sealing {printable(name)}: a {seal}-step rollout in a fresh interpreter"), \
                stdout_to_stderr():
            pack = sealed_copy(pack, seal, 0 if seed is None else seed)
    out = Path(ns.output)
    dump(pack, out, key=key)
    signed = ", signed" if key is not None else ""
    sealed = f", sealed ({seal} steps, seed {seed or 0})" if seal is not None else ""
    print(f"wrote {out} ({size_text(out.stat().st_size)}{signed}{sealed}): "
          f"{printable(repr(pack), 2000)}")
    print(f"fingerprint {pack.fingerprint}")
    for note in pack.notes:
        print(f"note: {printable(str(note), 2000)}")
    return EXIT_OK


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
    try:
        value = Decoder({}, f"--kwarg {key}").value(node, key)
        return key, materialize(value)
    except PackFormatError as e:
        raise CaptureError(str(e)) from None
