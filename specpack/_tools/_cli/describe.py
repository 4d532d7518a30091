"""``specpack inspect``: what a pack file holds, as a table or JSON; nothing in it is run. The
file's strings may be hostile: each row is escaped whole, and ``--json`` is ASCII."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..._core._errors import PackFormatError, SignatureError
from ..._core._text import printable, size_text
from ..._core._typedjson.render import render, render_code, render_items
from ...files import describe
from .output import EXIT_OK
from .packfile import check_file, read_key, run_imports

__all__ = ["command", "render_description"]

_VALUE_LIMIT = 200


def command(ns: argparse.Namespace) -> int:
    """Describe ``ns.file``; with ``--key-file``, exit 2 unless its signature is valid."""
    run_imports(ns)
    check_file(ns.file)
    key = read_key(ns.key_file)
    desc = describe(ns.file, key=key)
    if ns.json:
        print(json.dumps(desc, indent=2, default=str, ensure_ascii=True))
    else:
        print(render_description(ns.file, desc))
    sig = desc.get("signature") if isinstance(desc, dict) else None
    sig = sig if isinstance(sig, dict) else {}
    if key is not None and sig.get("status") != "valid":
        detail = sig.get("detail")
        raise SignatureError(
            f"{ns.file}: the signature check with --key-file {ns.key_file} failed: "
            f"{sig.get('status')}{f' ({detail})' if detail else ''}"
        )
    return EXIT_OK


def render_description(path: str, desc: dict[str, Any]) -> str:
    """The table ``specpack inspect`` prints for ``files.describe(path)``."""
    m = desc.get("manifest") if isinstance(desc, dict) else None
    if not isinstance(m, dict):
        raise PackFormatError("the file's description holds no manifest")
    raw_payloads = m.get("payloads")
    payloads: dict[str, Any] = raw_payloads if isinstance(raw_payloads, dict) else {}

    def value(node: Any) -> str:
        return render(node, payloads, _VALUE_LIMIT)

    rows: list[tuple[str, str]] = [
        ("file", f"{path} ({size_text(Path(path).stat().st_size)})"),
        ("format", str(m.get("format"))),
        ("id", str(m.get("id"))),
        ("backend", str(m.get("backend"))),
        ("entry point", "{}  [{}]".format(*render_code(m.get("entry_point"), payloads,
                                                       full=True))),
    ]
    kwargs = m.get("kwargs")
    if isinstance(kwargs, dict) and kwargs:
        files = _asset_paths(m)
        rows += _rows("kwargs", [f"{k} = {value(v)}{_file_mark(kwargs.get(k), files)}"
                                 for k, v in render_items(kwargs, payloads)])
    else:
        rows.append(("kwargs", "(none)"))
    layers = m.get("layers") if isinstance(m.get("layers"), list) else []
    if layers:
        for i, layer in enumerate(layers):
            if not isinstance(layer, dict):
                continue
            args = ", ".join(f"{k}={value(v)}"
                             for k, v in render_items(layer.get("kwargs"), payloads))
            name, origin = render_code(layer.get("class"), payloads)
            rows.append(("layers" if i == 0 else "", f"{i + 1}. {name}({args})  [{origin}]"))
        rows.append(("", f"   base env: the entry point ({_short_name(m.get('entry_point'))})"))
    else:
        rows.append(("layers", "(none: the bare env)"))
    if m.get("render_wrappers") == "make":
        rows.append(("render", "HumanRendering/RenderCollection added at build time by "
                               "render_mode, as gymnasium.make does"))
    spec = m.get("spec")
    if isinstance(spec, dict) and spec:
        fields = [f"{k}={_built(m, payloads) if k == 'entry_point' and v is None else value(v)}"
                  for k, v in render_items(spec, payloads)]
        rows.append(("spec", ", ".join(fields)))
    versions = m.get("versions")
    if isinstance(versions, dict):
        rows.append(("versions", ", ".join(f"{k} {v}" for k, v in versions.items())))
    rows.append(_fingerprint(desc, m))
    rows += _needs(m)
    code = [(d, p) for d, p in payloads.items() if isinstance(p, dict)]
    rows += _rows("payloads", [
        f"{p.get('kind')} {p.get('name')}: {size_text(_int(p.get('size')))}, {digest}, "
        f"{p.get('format', 'cloudpickle')} for Python {p.get('python')} "
        f"({p.get('note', 'unpickled when loaded')})" for digest, p in code])
    if not code:
        rows.append(("payloads", "none: no code travels by value; loads without --trust"))
    rows.append(("signature", _signature(desc)))
    if code:
        rows.append(("trust", _trust(desc)))
    notes = m.get("notes")
    if isinstance(notes, list):
        rows += _rows("notes", map(str, notes))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {printable(str(v), limit=10_000)}".rstrip()
                     for k, v in rows)


def _rows(label: str, texts: Iterable[str]) -> list[tuple[str, str]]:
    """One row per text, ``label`` on the first."""
    return [("" if i else label, text) for i, text in enumerate(texts)]


def _trust(desc: dict[str, Any]) -> str:
    """What loading a file with payloads needs."""
    sig = desc.get("signature")
    if isinstance(sig, dict) and sig.get("status") == "valid":
        return ("signed with the key given: it loads with this --key-file and needs no "
                "--trust; the payloads run code when the env is built")
    return ("loading it needs --trust, or --key-file with the key that signed it: the "
            "payloads run code when the env is built")


def _assets(m: dict[str, Any]) -> list[dict[str, Any]]:
    assets = m.get("assets")
    return [a for a in assets if isinstance(a, dict)] if isinstance(assets, list) else []


def _asset_paths(m: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    """``(normalised path, number from 1, asset)`` of each asset the manifest records."""
    return [(os.path.normpath(a["path"]), i, a) for i, a in enumerate(_assets(m), start=1)
            if isinstance(a.get("path"), str) and a["path"]]


def _file_mark(node: Any, files: list[tuple[str, int, dict[str, Any]]]) -> str:
    """``"  [file: asset 1, carried]"`` if the value holds an asset's path (or one inside it)."""
    if not files:
        return ""
    found: list[int] = []
    for text in _strings(node, 0):
        if not os.path.isabs(text):
            continue
        path = os.path.normpath(text)
        for base, i, asset in files:
            inside = asset.get("kind") == "dir" and path.startswith(base.rstrip(os.sep) + os.sep)
            if (path == base or inside) and i not in found:
                found.append(i)
    if not found:
        return ""
    how = {True: "carried", False: "checked at make()"}
    shown = ", ".join(f"asset {i}, {how[bool(files[i - 1][2].get('carried'))]}" for i in found)
    return f"  [file: {shown}]"


def _strings(node: Any, depth: int) -> list[str]:
    """The strings in a manifest value (a typed JSON node), bounded in depth."""
    if isinstance(node, str):
        return [node]
    if depth > 20:
        return []
    values = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    return [s for v in values for s in _strings(v, depth + 1)]


def _built(m: dict[str, Any], payloads: dict[str, Any]) -> str:
    """What a spec without an entry-point string builds: ``module:qualname`` or
    ``<by value: name>``."""
    name, origin = render_code(m.get("entry_point"), payloads, full=True)
    return f"<by value: {name}>" if origin.startswith("by value") else name


def _needs(m: dict[str, Any]) -> list[tuple[str, str]]:
    """Rows for what a rebuild needs: distributions (one a line), assets, the seal."""
    rows: list[tuple[str, str]] = []
    requires = m.get("requires")
    if isinstance(requires, dict):
        rows += _rows("requires", [f"{k}=={v}" for k, v in requires.items()])
    rows += _rows("assets", [
        f"{i}. {a.get('path')} ({size_text(_int(a.get('size')))}, sha256 "
        f"{str(a.get('sha256'))[:12]}, "
        f"{'carried' if a.get('carried') else 'not carried: checked at make()'})"
        for i, a in enumerate(_assets(m), start=1)])
    seal = m.get("seal")
    if isinstance(seal, dict):
        rows.append(("seal", f"{seal.get('steps')} steps, seed {seal.get('seed')}: "
                             "specpack.check(pack) / specpack check FILE compares a rebuild "
                             "with it"))
    return rows


def _fingerprint(desc: dict[str, Any], m: dict[str, Any]) -> tuple[str, str]:
    fp = desc.get("fingerprint")
    if isinstance(fp, dict) and fp.get("recorded") is not None:
        if fp.get("matches", True):
            return ("fingerprint", str(fp.get("recorded")))
        return ("fingerprint", f"{fp.get('computed')} (the file records {fp.get('recorded')}: "
                               "the manifest was edited)")
    return ("fingerprint", str(m.get("fingerprint") or "none recorded"))


def _int(x: Any) -> int:
    return x if isinstance(x, int) and not isinstance(x, bool) else 0


def _signature(desc: dict[str, Any]) -> str:
    sig = desc.get("signature")
    if not isinstance(sig, dict):
        return "unknown"
    rest = ", ".join(f"{k}: {v}" for k, v in sig.items() if k != "status")
    return f"{sig.get('status')}" + (f" ({rest})" if rest else "")


def _short_name(node: Any) -> str:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            return str(node["$ref"]).rpartition(":")[2]
        if "$code" in node:
            return "carried by value"
    return "?"
