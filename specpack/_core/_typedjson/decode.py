"""Decoding typed JSON into lowered values, exactly, importing and unpickling nothing: a value
that would change on the way in is refused, not coerced. The cost is linear (hash-collision
floods are refused before a set or dict is built)."""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections import Counter
from collections.abc import Callable
from typing import Any

from .._carry.carried import Blob, EnumRef
from .._carry.ref import CodeRef
from .._errors import PackFormatError
from .._text import printable
from .arrays import decode_array
from .tags import (
    FLOAT_WORDS,
    INT_PATTERN,
    MAX_DECIMAL_DIGITS,
    MAX_DEPTH,
    MAX_HEX_DIGITS,
    MAX_INT_CHARS,
    MAX_SAME_HASH,
    PAYLOAD_KIND,
    SAFE_INT,
    TAGS,
    Tag,
    dotted_name,
    read_decimal,
    tag_of,
)
from .walk import Path, path_text

__all__ = ["Decoder", "decode"]

_JSON_TYPES: dict[type, str] = {str: "a string", list: "a list", dict: "an object"}


class Decoder:
    """Typed JSON node -> lowered value, payloads resolved in ``payloads`` (the manifest's
    table); errors name ``source`` first; ``allow`` is attached to every code reference."""

    def __init__(self, payloads: dict[str, Any], source: str,
                 allow: tuple[str, ...] | None = None) -> None:
        self.payloads = payloads
        self.source = source
        self.allow = allow
        # kind -> handler(tag, body, node, at, depth)
        self._kinds: dict[str, Callable[..., Any]] = {
            "bigint": lambda tag, body, node, at, d: self.bigint(body, at),
            "float": lambda tag, body, node, at, d: self.number(node, at),
            "bytes": lambda tag, body, node, at, d: self.b64(body, at),
            "complex": self._complex, "sequence": self._sequence, "members": self._members,
            "pairs": self._pairs, "enum": self._enum, "ref": self._ref, "payload": self.payload,
            "array": lambda tag, body, node, at, d: decode_array(self, body, at, False),
            "scalar": lambda tag, body, node, at, d: decode_array(self, body, at, True),
        }

    def fail(self, at: Path, why: str) -> PackFormatError:
        """The error for a bad node at ``at`` (the place is rendered now, escaped)."""
        return PackFormatError(f"{self.source}: {path_text(at)}: {printable(why, 400)}")

    def value(self, node: Any, at: Path = "value", depth: int = 0) -> Any:
        """The lowered value of ``node``; ``at`` is its place (a label such as ``"kwargs"``)."""
        if depth > MAX_DEPTH:
            raise self.fail(at, f"nested more than {MAX_DEPTH} levels deep")
        t = type(node)
        if node is None or t is bool or t is str or t is int:
            return node
        if t is float:
            if node - node != 0.0:  # nan or inf: written as $float, never as a number
                raise self.fail(at, f"{node!r} is not a JSON number (write {{\"$float\": "
                                "\"nan\"}, {\"$float\": \"inf\"} or {\"$float\": \"-inf\"})")
            return node
        d = depth + 1
        if t is list:
            return self._items(node, at, d)
        if t is not dict:
            raise self.fail(at, f"unexpected JSON {t.__name__}")
        try:
            name = tag_of(node)
        except ValueError as e:
            raise self.fail(at, str(e)) from None
        if name is None:
            out = {}
            for k, v in node.items():
                if type(k) is not str:
                    raise self.fail(at, "object keys must be strings")
                out[k] = self.value(v, (at, k), d)
            return out
        tag = TAGS.get(name)
        if tag is None:
            raise self.fail(at, f"unknown type tag {name[:40]!r}")
        if len(node) > 1:
            extra = [k for k in node if k != name and k not in tag.siblings]
            if extra:
                raise self.fail(at, f"unexpected keys {sorted(map(str, extra))[:5]} beside "
                                f"{name}")
        body = node[name]
        if tag.body is not None and type(body) is not tag.body:
            raise self.fail(at, f"{name} must hold {_JSON_TYPES[tag.body]}, got "
                            f"{type(body).__name__}")
        return self._kinds[tag.kind](tag, body, node, at, d)

    # -- numbers and bytes ------------------------------------------------------------------

    def bigint(self, s: str, at: Path) -> int:
        """A ``$int`` body: exactly ``[+-]?(0x[0-9a-f]+|[0-9]+)``, beyond ``±2**53``."""
        if len(s) > MAX_INT_CHARS:
            raise self.fail(at, f"$int has more than {MAX_INT_CHARS} characters")
        m = INT_PATTERN.fullmatch(s)
        if m is None:
            raise self.fail(at, f"$int {s[:40]!r} is not an integer (write decimal digits or "
                            "lowercase '0x' hexadecimal, with an optional sign)")
        digits = m.group(1)
        hexadecimal = digits.startswith("0x")
        if hexadecimal and len(digits) - 2 > MAX_HEX_DIGITS:
            raise self.fail(at, f"$int has more than {MAX_HEX_DIGITS} hex digits")
        if not hexadecimal and len(digits) > MAX_DECIMAL_DIGITS:
            raise self.fail(at, f"$int has more than {MAX_DECIMAL_DIGITS} decimal digits; "
                            "write it in hexadecimal ('0x...')")
        value = int(s, 16) if hexadecimal else read_decimal(s)
        if -SAFE_INT <= value <= SAFE_INT:
            raise self.fail(at, f"$int {s[:40]!r} lies within ±2**53: write it as a plain "
                            "JSON number")
        return value

    def number(self, x: Any, at: Path) -> float:
        """A number or a ``$float`` node, as a float it equals exactly."""
        t = type(x)
        if t is dict and len(x) == 1 and "$float" in x:
            v = x["$float"]
            if v not in FLOAT_WORDS:
                raise self.fail(at, f"$float must be 'nan', 'inf' or '-inf', got {str(v)[:20]!r}")
            return float(v)
        if t is float:
            if x - x != 0.0:
                raise self.fail(at, f"{x!r} is not a JSON number")
            return float(x)
        if t is int:
            try:
                if float(x) == x:
                    return float(x)
            except OverflowError:
                pass
            raise self.fail(at, f"{str(x)[:40]} has no exact float value")
        raise self.fail(at, f"expected a number, got {t.__name__}")

    def _complex(self, tag: Tag, body: list[Any], node: Any, at: Path, d: int) -> complex:
        if len(body) != 2:
            raise self.fail(at, "$complex must hold [real, imag]")
        return complex(self.number(body[0], (at, 0)), self.number(body[1], (at, 1)))

    def b64(self, s: str, at: Path) -> bytes:
        try:
            return base64.b64decode(s.encode("ascii"), validate=True)
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raise self.fail(at, "invalid base64 data") from None

    # -- containers -------------------------------------------------------------------------

    def _items(self, body: list[Any], at: Path, d: int) -> list[Any]:
        if d > MAX_DEPTH:  # value() refuses even a scalar this deep
            return [self.value(v, (at, i), d) for i, v in enumerate(body)]
        # strings, ints, bools and nulls are themselves: no call, no place made for them
        # (a trace is thousands of them, decoded in verify's parent)
        out = []
        for i, v in enumerate(body):
            t = type(v)
            out.append(v if t is str or t is int or t is bool or v is None
                       else self.value(v, (at, i), d))
        return out

    def _sequence(self, tag: Tag, body: list[Any], node: Any, at: Path, d: int) -> Any:
        return tag.python[0](self._items(body, at, d))

    def _unique(self, values: list[Any], at: Path, what: str) -> None:
        """Refuse unhashable or hash-flooding members, in linear time."""
        try:
            hashes = Counter(map(hash, values))
        except TypeError as e:
            raise self.fail(at, f"{what} is not hashable ({e})") from None
        if hashes:
            top, count = hashes.most_common(1)[0]
            if count > MAX_SAME_HASH:
                raise self.fail(at, f"{count} {what}s share one hash value ({top}); more than "
                                f"{MAX_SAME_HASH} is a hash-collision flood, refused")

    def _members(self, tag: Tag, body: list[Any], node: Any, at: Path, d: int) -> Any:
        items = self._items(body, at, d)
        self._unique(items, at, f"{tag.name} member")
        out = tag.python[0](items)
        if len(out) != len(items):
            raise self.fail(at, f"{tag.name} holds equal members twice (the encoder writes "
                            "each member once)")
        return out

    def _pairs(self, tag: Tag, body: list[Any], node: Any, at: Path, d: int) -> dict[Any, Any]:
        keys: list[Any] = []
        values: list[Any] = []
        for i, pair in enumerate(body):
            if type(pair) is not list or len(pair) != 2:
                raise self.fail((at, i), "$dict items must be [key, value] pairs")
            keys.append(self.value(pair[0], ((at, i), 0), d))
            values.append(self.value(pair[1], ((at, i), 1), d))
        self._unique(keys, at, "$dict key")
        out = dict(zip(keys, values))
        if len(out) != len(keys):
            raise self.fail(at, "$dict holds one key twice")
        if all(type(k) is str and not k.startswith("$") for k in keys):
            raise self.fail(at, "$dict with only string keys not starting with '$' must be a "
                            "plain JSON object (one spelling per value)")
        return out

    # -- references and payloads ------------------------------------------------------------

    def _enum(self, tag: Tag, body: str, node: dict[str, Any], at: Path, d: int) -> EnumRef:
        name = node.get("name")
        mod, sep, qual = body.partition(":")
        if not sep or not dotted_name(mod) or not dotted_name(qual) or type(name) is not str:
            raise self.fail(at, "$enum must be 'module:Class' with a 'name' string")
        return EnumRef(mod, qual, name, allow=self.allow)

    def _ref(self, tag: Tag, body: str, node: Any, at: Path, d: int) -> CodeRef:
        mod, sep, qual = body.partition(":")
        if "registered" in node:  # the callable importing ``mod`` registers under this id
            registered = node["registered"]
            if not sep or not dotted_name(mod) or not qual or type(registered) is not str or (
                    not registered):
                raise self.fail(at, "a registry $ref is 'module:name' with a 'registered' id "
                                "string")
            return CodeRef(mod, qual, allow=self.allow, registered=registered)
        if not sep or not dotted_name(mod) or not dotted_name(qual):
            raise self.fail(at, f"$ref {body[:80]!r} is not of the form "
                            "'package.module:QualName'")
        if "args" in node or "keywords" in node:  # a functools.partial of mod:qual
            args, keywords = node.get("args"), node.get("keywords")
            if type(args) is not list or type(keywords) is not dict:
                raise self.fail(at, "a bound $ref has both 'args' (a list of values) and "
                                "'keywords' (an object of values)")
            bound_args = tuple(self._items(args, (at, "args"), d))
            bound_kw = self.value(keywords, (at, "keywords"), d)
            if type(bound_kw) is not dict or any(type(k) is not str for k in bound_kw):
                raise self.fail((at, "keywords"), "keywords must map strings to values")
            return CodeRef(mod, qual, allow=self.allow, bound=(bound_args, bound_kw))
        return CodeRef(mod, qual, allow=self.allow)

    def payload(self, tag: Tag, digest: str, node: Any, at: Path, d: int) -> CodeRef | Blob:
        """A ``$code``/``$object`` reference: the payload stays bytes (never unpickled here)."""
        entry = self.payloads.get(digest)
        if type(entry) is not dict:
            raise self.fail(at, f"{tag.name} {digest[:80]!r} is not in the payloads table")
        kind = PAYLOAD_KIND[tag.name]
        if entry.get("kind") != kind:
            raise self.fail(at, f"payload {digest} is of kind {str(entry.get('kind'))[:20]!r}, "
                            f"expected {kind!r}")
        where: Path = (("payloads", digest), "data")
        raw = entry.get("data")
        if type(raw) is not str:
            raise self.fail(where, "data must be a base64 string")
        data = self.b64(raw, where)
        real = "sha256:" + hashlib.sha256(data).hexdigest()
        if real != digest:
            raise self.fail(at, f"payload digest mismatch: table says {digest}, data "
                            f"hashes to {real}")
        name = entry.get("name")
        python = entry.get("python")
        if type(name) is not str or (python is not None and type(python) is not str):
            raise self.fail(("payloads", digest), "name and python must be strings")
        if kind == "code":
            mod, sep, qual = name.partition(":")
            return CodeRef(mod if sep and mod else "__main__", qual if sep and qual else name,
                           data, python)
        return Blob(data, name, python or "unknown")


def decode(node: Any, payloads: dict[str, Any] | None = None,
           source: str = "<manifest>") -> Any:
    """The lowered value of a typed-JSON node (code and enum members lazy, payloads bytes);
    malformed input, also too large or deep to decode, raises :class:`PackFormatError`."""
    try:
        return Decoder(payloads or {}, source).value(node, "value")
    except (RecursionError, MemoryError, OverflowError) as e:
        raise PackFormatError(f"{source}: value cannot be decoded ({type(e).__name__}: nested "
                              "too deeply or too large)") from None
