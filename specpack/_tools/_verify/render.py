"""Showing exact encodings in difference lines, bounded in length: floats by their shortest
round-trip ``repr``, arrays with every element unique (:func:`show`), and where two arrays or
byte strings first differ, visible even when the values are cut (:func:`detail`)."""

from __future__ import annotations

import ast
import base64
import contextlib
from typing import Any

import numpy as np

from ..._core._exact.exact import SMALL
from ..._core._exact.nodes import DIGEST, NOT_COMPARABLE
from ..._core._text import printable, short

__all__ = ["array_of", "detail", "element", "show"]

#: About how many characters one rendered value may take.
WIDTH = 400
_TORCH = {"torch.float64": "<f8", "torch.float32": "<f4", "torch.float16": "<f2",
          "torch.int64": "<i8", "torch.int32": "<i4", "torch.int16": "<i2", "torch.int8": "|i1",
          "torch.uint8": "|u1", "torch.bool": "|b1", "torch.complex64": "<c8",
          "torch.complex128": "<c16"}


def show(value: Any, width: int = WIDTH) -> str:
    """``value`` (an encoding or trace data) as exact text of about ``width`` characters."""
    try:
        text = _show(value, width)
    except Exception:  # noqa: BLE001 - a malformed encoding is shown as data
        text = short(value, width)
    # A name from the env may hold a line break or a bidi mark: escaped.
    text = printable(text, limit=len(text))
    return text if len(text) <= width else text[: width - 3] + "..."


def _dtype(text: Any) -> np.dtype:
    spec = ast.literal_eval(text) if isinstance(text, str) and text.startswith("[") else text
    dt: np.dtype = np.dtype(spec)
    return dt


def array_of(node: Any) -> np.ndarray | None:
    """The numpy array an ``array``/``scalar``/``tensor`` encoding holds, or None."""
    if type(node) is not list or not node:
        return None
    kind = node[0]
    if kind == "scalar" and len(node) == 4:
        return np.frombuffer(base64.b64decode(node[3]), _dtype(node[2])).reshape(())
    if kind not in ("array", "tensor") or len(node) < 5 or type(node[4]) is not str:
        return None
    data = base64.b64decode(node[4])
    arr: np.ndarray
    if kind == "array":
        arr = np.frombuffer(data, _dtype(node[2]))
    elif node[2] == "torch.bfloat16":  # its bits are a float32's upper half
        arr = (np.frombuffer(data, "<u2").astype("<u4") << 16).view("<f4")
    else:
        arr = np.frombuffer(data, _TORCH[node[2]])
    arr = arr.reshape(node[3])
    return arr


def _join(parts: list[Any], width: int, key: bool = False) -> str:
    out: list[str] = []
    used = 0
    for p in parts:
        text = (f"{_show(p[0], width)}: {_show(p[1], width)}" if key else _show(p, width))
        used += len(text) + 2
        out.append(text)
        if used > width:
            out.append("...")
            break
    return ", ".join(out)


def _show(v: Any, width: int) -> str:
    t = type(v)
    if t is dict:
        return "{" + _join([[k, x] for k, x in v.items()], width, key=True) + "}"
    if t is not list or not v or type(v[0]) is not str:
        return short(v, width) if t is not list else "[" + _join(v, width) + "]"
    kind, rest = v[0], v[1:]
    name = rest[0] if rest else "?"
    if kind == NOT_COMPARABLE:
        return f"<{name}: not comparable, {rest[1] if len(rest) > 1 else '?'}>"
    if kind == DIGEST and len(rest) == 3:
        return f"<{rest[1]}, sha256 {str(rest[2])[:16]}>"
    if kind == "global":
        return str(name)
    if kind == "nan":
        return f"nan ({name})"
    if kind == "<cycle>":
        return f"<the container {name} level(s) up>"
    if kind in ("<class>", "<callable>"):
        return f"{kind[1:-1]} {name}"
    arr = array_of(v)
    if arr is not None:
        if kind == "scalar":
            return element(arr[()], repr(arr[()]))
        text = np.array2string(arr, floatmode="unique", threshold=SMALL, separator=", ",
                               max_line_width=max(width, 80) * 4)
        shown = f"{text} ({arr.dtype if kind == 'array' else v[2]})"
        return shown if name == "numpy.ndarray" else f"{name}({shown})"
    if kind == "int" or (kind == "complex" and len(rest) == 3):
        return str(rest[1]) if kind == "int" else _complex(rest[1], rest[2])
    if kind == "str":
        return repr(base64.b64decode(rest[1]).decode("utf-8", "surrogatepass"))
    if kind == "bytes":
        data = base64.b64decode(rest[1])
        return short(data, width) if name == "bytes" else f"{name}({short(data, width)})"
    if kind == "enum":
        return f"{name}.{rest[1]}"
    return _container(kind, name, rest, width)


def _container(kind: str, name: str, rest: list[Any], width: int) -> str:
    if kind in ("list", "tuple", "set", "frozenset") and len(rest) == 2:
        body = _join(rest[1], width)
        text = {"list": "[{}]", "tuple": "({})" if len(rest[1]) != 1 else "({},)",
                "set": "{{{}}}", "frozenset": "frozenset({{{}}})"}[kind].format(body)
        return text if name == kind else f"{name}({text})"
    if kind in ("dict", "mapping") and len(rest) == 2:
        body = "{" + _join(rest[1], width, key=True) + "}"
        return body if name == "dict" else f"{name}({body})"
    if kind == "namedtuple" and len(rest) == 2:
        return f"{name}(" + ", ".join(f"{p[0]}={_show(p[1], width)}" for p in rest[1]) + ")"
    if kind == "array" and len(rest) == 5:  # an object array: its items
        return f"{name}({_show(rest[3], width)}, shape {tuple(rest[2])}, {rest[1]})"
    if kind == "object" and len(rest) == 6:
        state = rest[3]
        if type(state) is list and state and state[0] == "dict":
            body = ", ".join(f"{p[0]}={_show(p[1], width)}" if type(p[0]) is str else
                             f"{_show(p[0], width)}: {_show(p[1], width)}" for p in state[2])
        else:
            body = ", ".join(_show(x, width) for x in rest[2:] if x is not None
                             and x != ["tuple", "tuple", []])
        return f"{name}({body})"
    if kind == "tensor":
        return f"<{name} {rest[1]} {tuple(rest[2])}>"
    if kind == "function":
        return f"<function {name}>"
    return short(rest, width)


def _part(text: str) -> tuple[float, str]:
    """A complex part as :func:`.exact.float_hex` wrote it: the float, and how to show it."""
    if text.startswith("nan:"):
        return float("nan"), f"nan ({text[4:]})"
    x = float.fromhex(text)
    return x, repr(x)


def _complex(real: str, imag: str) -> str:
    (x, xs), (y, ys) = _part(real), _part(imag)
    return repr(complex(x, y)) if x == x and y == y else f"complex({xs}, {ys})"


def element(x: Any, text: str | None = None) -> str:
    """An array element (or numpy scalar) as text; a NaN with its bits, so two NaNs that
    differ are told apart: ``"nan (0x7ff8000000000001)"``."""
    shown = str(x) if text is None else text
    with contextlib.suppress(Exception):  # shown without its bits
        arr = np.asarray(x)
        if arr.dtype.kind == "f" and arr.ndim == 0 and np.isnan(arr):
            data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
            bits = int.from_bytes(data, "little")
            bits_text = f"nan (0x{bits:0{2 * len(data)}x})"
            return shown.replace("nan", bits_text, 1) if "nan" in shown else \
                f"{shown} ({bits_text})"
    return shown


def detail(u: Any, v: Any) -> str:
    """Where two arrays (or byte strings) of one type, dtype and shape first differ:
    ``"; first difference at [0, 1]: 1.0 vs 1.000000000001"``, or ``""``."""
    with contextlib.suppress(Exception):  # detail is a courtesy
        a, b = array_of(u), array_of(v)
        if a is not None and b is not None and a.shape == b.shape and a.dtype == b.dtype:
            x, y = a.reshape(-1).view(np.uint8).reshape(a.size, -1), \
                b.reshape(-1).view(np.uint8).reshape(b.size, -1)
            rows = np.flatnonzero((x != y).any(axis=1))
            if len(rows) and a.ndim:
                where = tuple(int(i) for i in np.unravel_index(int(rows[0]), a.shape))
                return (f"; first difference at {list(where)}: {element(a[where])} vs "
                        f"{element(b[where])}")
        if (type(u) is list and type(v) is list and len(u) == len(v) == 3 and u[0] == "bytes"
                and v[0] == "bytes"):
            p, q = base64.b64decode(u[2]), base64.b64decode(v[2])
            at = next((i for i, (x, y) in enumerate(zip(p, q)) if x != y), min(len(p), len(q)))
            return (f"; first difference at byte {at}: {short(p[at:at + 8], 60)} vs "
                    f"{short(q[at:at + 8], 60)}")
    return ""
