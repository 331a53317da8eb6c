"""The docs stand on their own: no pointer to a text users do not have, no dead link."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from markdown_it import MarkdownIt

from tests.docs_blocks import DOC_FILES, ROOT

if TYPE_CHECKING:
    from pathlib import Path

# What a reader of the docs has no copy of: the specification roost was written to
# and its numbered sections.
ELSEWHERE = re.compile(r"(?i:\bsections? \d|§|\bthe contract\b|contract's)|FLOW-LANGUAGE|STYLE\.md")


def _ids(paths: tuple[Path, ...]) -> list[str]:
    return [str(path.relative_to(ROOT)) for path in paths]


def _links(path: Path) -> list[str]:
    tokens = MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8"))
    found = []
    for token in tokens:
        for child in token.children or ():
            if child.type in ("link_open", "image"):
                target = child.attrGet("href") or child.attrGet("src")
                found.append(str(target))
    return found


def _anchor(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, - for spaces."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    return {
        _anchor(token.content)
        for index, token in enumerate(tokens)
        if token.type == "inline" and index and tokens[index - 1].type == "heading_open"
    }


@pytest.mark.parametrize("path", DOC_FILES, ids=_ids(DOC_FILES))
def test_no_page_points_at_a_text_users_do_not_have(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    found = [f"{n}: {line}" for n, line in enumerate(lines, 1) if ELSEWHERE.search(line)]
    assert found == []


@pytest.mark.parametrize("path", DOC_FILES, ids=_ids(DOC_FILES))
def test_every_link_between_pages_leads_somewhere(path: Path) -> None:
    dead = []
    for link in _links(path):
        if re.match(r"^[a-z]+:", link):
            continue  # a web address: not checked offline
        file, _, anchor = link.partition("#")
        target = (path.parent / file).resolve() if file else path
        missing_anchor = bool(anchor) and target.suffix == ".md" and target.exists()
        if not target.exists() or (missing_anchor and anchor not in _anchors(target)):
            dead.append(link)
    assert dead == []


def test_the_index_page_leads_to_every_page() -> None:
    docs = ROOT / "docs"
    index = docs / "index.md"
    linked = {(docs / link.partition("#")[0]).resolve() for link in _links(index)}
    pages = {page.resolve() for page in docs.glob("*.md") if page != index}
    assert sorted(page.name for page in pages - linked) == []
