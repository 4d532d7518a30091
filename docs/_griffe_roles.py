"""A griffe extension for the API reference: Sphinx roles in docstrings become code spans.

specpack's docstrings use reST roles (``:class:`~specpack.BuildError```, ``:func:``,
``:meth:``) so that they read well in ``help()``; mkdocstrings renders Markdown, where a role
would show up as literal text. ``~a.b.C`` keeps the last name (``C``), as Sphinx does. The
``Example::`` blocks of reST become a fenced Python block; one that follows the numpy sections
(``Parameters``, ``Returns``, ``Raises``) becomes their ``Examples`` section, so the numpy parser
does not read it as more entries of the section above it.
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


_SECTION_RULE = re.compile(r"^[ \t]*-{3,}[ \t]*$", re.MULTILINE)


def _example(m: re.Match[str]) -> str:
    indent, head, body = m.group("indent"), m.group("head"), m.group("body")
    lines = body.rstrip("\n").split("\n")
    width = min((len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()), default=0)
    code = "\n".join(indent + ln[width:] if ln.strip() else "" for ln in lines)
    fenced = f"{indent}```python\n{code}\n{indent}```\n\n"
    if head.strip() in ("Example", "Examples") and _SECTION_RULE.search(m.string, 0, m.start()):
        # After numpy sections (Parameters, Raises, ...) an "Example::" paragraph would be read
        # as more entries of the last section: make it the numpy "Examples" section instead.
        return f"{indent}Examples\n{indent}--------\n{fenced}"
    head = f"{indent}{head}:\n\n" if head.strip() else ""
    return f"{head}{fenced}"


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
