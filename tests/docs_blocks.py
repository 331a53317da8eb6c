"""The fenced blocks of the docs, read with a Markdown parser, and how they are marked.

A block is marked by an HTML comment right before it:

- ``<!-- runnable -->``, optionally with settings, ``<!-- runnable: file=demo.yaml
  answer=yes ends=error -->`` (shell-quoted: ``answer="Four of us"``). A flow is
  written to ``file`` (default ``flow.yaml``), started offline, given each
  ``answer`` in turn at its interrupts, and must end in ``ends`` (default
  ``terminated``). A Python block is run as a script.
- ``<!-- not runnable: REASON -->``: shown only; a flow must still validate.
- ``<!-- output -->`` before a ``text`` block: what the runnable Python block
  before it prints, exactly.
- ``<!-- file: PATH -->``: a file the page's flows use (a skill's SKILL.md, say),
  written to PATH beside the flow file before a flow of its page runs.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = (*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md")

_MARKER = re.compile(
    r"^<!--\s*(runnable|not runnable|output|file)\s*(?::\s*(.*?))?\s*-->\s*$", re.S
)


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text and its marker."""

    path: Path
    line: int  # of the opening fence, counted from 1
    lang: str
    text: str
    heading: str  # the latest heading before it, as written (`message` keeps its backticks)
    marker: str = ""  # "runnable", "not runnable", "output" or ""
    settings: str = ""  # what follows the marker's colon

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    def setting(self, key: str, default: str) -> str:
        """A ``key=value`` setting of a runnable marker."""
        for word in shlex.split(self.settings):
            name, _, value = word.partition("=")
            if name == key:
                return value
        return default

    def all_of(self, key: str) -> tuple[str, ...]:
        """Every value of a setting that may repeat (``answer``)."""
        found = []
        for word in shlex.split(self.settings):
            name, _, value = word.partition("=")
            if name == key:
                found.append(value)
        return tuple(found)


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, in order."""
    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    found: list[Block] = []
    heading = ""
    marker: tuple[str, str] | None = None
    for index, token in enumerate(tokens):
        if token.type == "inline" and index and tokens[index - 1].type == "heading_open":
            heading = token.content
        if token.type == "html_block":
            match = _MARKER.match(token.content.strip())
            marker = (match.group(1), match.group(2) or "") if match else None
            continue
        if token.type == "fence":
            kind, settings = marker or ("", "")
            line = (token.map[0] + 1) if token.map else 0
            found.append(
                Block(path, line, token.info.strip(), token.content, heading, kind, settings)
            )
        marker = None
    return found


def all_blocks() -> list[Block]:
    """The fenced blocks of every page of docs/ and of the README."""
    return [block for path in DOC_FILES for block in blocks(path)]


def page(name: str) -> list[Block]:
    """The fenced blocks of ``docs/NAME``."""
    return blocks(ROOT / "docs" / name)


def write_files(blocks: list[Block], folder: Path) -> None:
    """Writes the ``<!-- file: PATH -->`` blocks of ``blocks`` under ``folder``."""
    for block in blocks:
        if block.marker == "file":
            target = folder / block.settings
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")


def output_of(block: Block, page_blocks: list[Block]) -> str | None:
    """The text a runnable Python block is documented to print, if the page says."""
    position = page_blocks.index(block)
    if position + 1 < len(page_blocks):
        after = page_blocks[position + 1]
        if after.marker == "output":
            return after.text
    return None


def tables(path: Path) -> list[tuple[str, list[list[str]]]]:
    """Each table of a page with the heading it is under: its body rows, cells as written."""
    tokens = MarkdownIt("commonmark").enable("table").parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, list[list[str]]]] = []
    heading = ""
    rows: list[list[str]] | None = None
    in_body = False
    for index, token in enumerate(tokens):
        if token.type == "inline" and index and tokens[index - 1].type == "heading_open":
            heading = token.content
        elif token.type == "table_open":
            rows = []
        elif token.type in ("tbody_open", "tbody_close"):
            in_body = token.type == "tbody_open"
        elif token.type == "tr_open" and in_body and rows is not None:
            rows.append([])
        elif token.type == "inline" and in_body and rows:
            rows[-1].append(token.content)
        elif token.type == "table_close" and rows is not None:
            found.append((heading, rows))
            rows = None
    return found
