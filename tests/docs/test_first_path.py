"""The docs' first path (issue 30): what a newcomer reads first is small, and the API pages
document every public name once.

The first path is mkdocs.yml's nav before "Guides" (hello, home, quickstart, the core API);
``tools/structure.py`` counts its words (markdown plus the docstrings its ``:::`` directives
render) and CI prints the figure. The bound here is the issue's: at most 3,000 words.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from docs_blocks import ROOT

FIRST_PATH_WORDS = 3000

_spec = importlib.util.spec_from_file_location("structure", ROOT / "tools" / "structure.py")
assert _spec is not None and _spec.loader is not None
structure = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(structure)


def _directives(page: str) -> list[str]:
    return re.findall(r"^:::\s+(\S+)", (ROOT / "docs" / page).read_text(encoding="utf-8"),
                      re.MULTILINE)


def test_the_first_path_is_the_nav_before_the_guides() -> None:
    assert structure.first_path_pages() == ["hello.md", "index.md", "quickstart.md", "core.md"]


def test_the_first_path_is_at_most_3000_words() -> None:
    figures = structure.docs_figures()
    assert figures["pages"]["core.md"]["docstrings"] > 1000  # the directives were counted
    assert figures["words"] <= FIRST_PATH_WORDS, figures


def test_the_core_page_renders_no_deprecated_method() -> None:
    text = (ROOT / "docs" / "core.md").read_text(encoding="utf-8")
    block = text.split("::: specpack.SpecPack\n", 1)[1].split("\n\n", 1)[0]
    members = structure._options(block.splitlines())["members"]
    assert members and not {"verify", "seal", "check", "with_surface"} & set(members)


def test_every_api_object_is_documented_once() -> None:
    names = _directives("core.md") + _directives("api.md") + _directives("errors.md")
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    # the SpecPack members the core page leaves out are on the reference page
    assert {"specpack.SpecPack.evolve", "specpack.SpecPack.to_json",
            "specpack.SpecPack.from_json"} <= set(_directives("api.md"))


def test_directive_options_are_read(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("Two words\n\n::: specpack.SpecPack\n    options:\n      members:\n"
                    "        - make\n\n::: specpack.files.dump\n", encoding="utf-8")
    text, docs = structure.page_words(page)
    import inspect

    import specpack

    expected = sum(len((inspect.getdoc(o) or "").split()) for o in
                   (specpack.SpecPack, specpack.SpecPack.make, specpack.dump))
    assert (text, docs) == (2, expected)
    assert structure._options(["    options:", "      members: [a, b]"]) == {"members": ["a", "b"]}
    assert structure._options(["      members: false"]) == {"members": False}
