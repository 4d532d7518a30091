"""A griffe extension for the API reference: Sphinx roles in docstrings become code spans.

specpack's docstrings use reST roles (``:class:`~specpack.errors.BuildError```, ``:func:``,
``:meth:``) so that they read well in ``help()``; mkdocstrings renders Markdown, where a role
would show up as literal text. ``~a.b.C`` keeps the last name (``C``), as Sphinx does. The
``Example::`` blocks of reST become a fenced Python block.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|exc|data|obj):`(~?)([^`]+)`")
_EXAMPLE = re.compile(r"^(?P<indent>[ \t]*)(?P<head>[^\n]*?)::[ \t]*\n\n(?P<body>(?:(?P=indent)[ \t]+[^\n]*\n|[ \t]*\n)+)",
                      re.MULTILINE)


def _role(m: re.Match[str]) -> str:
    tilde, target = m.group(1), m.group(2)
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


def _example(m: re.Match[str]) -> str:
    indent, head, body = m.group("indent"), m.group("head"), m.group("body")
    lines = body.rstrip("\n").split("\n")
    width = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()), default=0)
    code = "\n".join(indent + ln[width:] if ln.strip() else "" for ln in lines)
    head = f"{indent}{head}:\n\n" if head.strip() else ""
    return f"{head}{indent}```python\n{code}\n{indent}```\n\n"


def convert(text: str) -> str:
    """reST roles and ``::`` literal blocks -> Markdown."""
    text = _ROLE.sub(_role, text)
    if not text.endswith("\n"):
        text += "\n"
    return _EXAMPLE.sub(_example, text).rstrip("\n")


class SphinxRoles(griffe.Extension):
    """Rewrite every docstring once griffe has loaded its object."""

    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = convert(obj.docstring.value)
