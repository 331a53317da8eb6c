"""Styled lines for a run's output: plain text to a pipe or a file, rich for a person.

A line is a sequence of pieces, each a text and its rich style. Where a person
is looking (a terminal, a notebook) rich prints it in colour. Anywhere else
the styles would be dropped anyway, so the text is written straight to the
output, as rich would have written it (control codes taken out, tabs
expanded) but without rich's cost per call: rich looks at the terminal's size
and the environment on every print, and flushes after each one, which made
printing most of a ``roost run``'s time.

Plain output is flushed when the event loop next gets control (a run waiting
for a model, a tool, a person), and at least every tenth of a second while a
run never waits, so a pipe shows each line about as soon as rich would have.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from typing import Protocol

from rich.cells import cell_len
from rich.console import Console
from rich.control import STRIP_CONTROL_CODES, strip_control_codes
from rich.text import Text

Piece = tuple[str, str]  # a text and its rich style ("" for none)

_FLUSH_EVERY = 0.1  # seconds of output a pipe may wait for while a run never waits
# What rich changes in a text (the control codes it strips, tabs): most texts hold none.
_CHANGED_BY_RICH = re.compile("[\t" + "".join(map(chr, STRIP_CONTROL_CODES)) + "]")


class Lines(Protocol):
    """Where a run's lines go."""

    def write(self, pieces: Sequence[Piece], end: str = "\n") -> None: ...

    def flush(self) -> None: ...


def lines_for(console: Console) -> Lines:
    """Rich lines when ``console`` shows to a person, plain ones otherwise."""
    if console.is_terminal or console.is_jupyter:
        return RichLines(console)
    return PlainLines(console)


class RichLines:
    """Lines printed by rich, one call per line."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def write(self, pieces: Sequence[Piece], end: str = "\n") -> None:
        self.console.print(Text.assemble(*pieces), end=end)

    def flush(self) -> None:
        """Nothing to do: rich flushes after every print."""


class PlainLines:
    """Lines written as plain text to the console's file."""

    def __init__(self, console: Console) -> None:
        self.console = console  # its file is looked up on each write, as rich does
        self._flushed = time.monotonic()
        # The event loop a flush waits for: a loop that ended without running it is no
        # reason to wait, so a write under another loop asks that one.
        self._pending: asyncio.AbstractEventLoop | None = None

    def write(self, pieces: Sequence[Piece], end: str = "\n") -> None:
        text = "".join([piece[0] for piece in pieces])
        if _CHANGED_BY_RICH.search(text) is not None:
            text = plain_text(text)
        self.console.file.write(text + end)
        self._flush_soon()

    def flush(self) -> None:
        self._pending = None
        self._flushed = time.monotonic()
        self.console.file.flush()

    def _flush_soon(self) -> None:
        if time.monotonic() - self._flushed >= _FLUSH_EVERY:
            self.flush()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop on this thread: nothing would run a later flush
            self.flush()
            return
        if self._pending is not loop:
            self._pending = loop
            loop.call_soon(self._flush_if_pending)

    def _flush_if_pending(self) -> None:
        if self._pending is not None:
            self.flush()


def plain_text(text: str) -> str:
    """``text`` as rich prints it without a terminal: control codes out, tabs expanded."""
    if text.isascii() and text.isprintable():
        return text  # most cells: nothing to strip or expand (a tab is not printable)
    text = strip_control_codes(text)
    if "\t" in text:  # rare: rich's own expansion, which counts wide characters as two
        expanded = Text(text)
        expanded.expand_tabs(8)
        return expanded.plain
    return text


def _width(cell: str) -> int:
    """The cells a text takes on a terminal: its length when it is plain ASCII."""
    return len(cell) if cell.isascii() and cell.isprintable() else cell_len(cell)


def _shown(cell: str, width: int) -> str:
    # A column no wider than nothing (every cell zero-width characters only) is
    # cropped to nothing by rich; the same here, so the two never differ.
    return cell if width else ""


def print_columns(console: Console, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A table of left-aligned columns, as a borderless rich Table lays it out when it fits.

    Written as text in one call: a rich Table measures and renders every cell on
    its own, which took seconds for ``roost runs`` over thousands of runs. Each
    cell is padded by a space on either side; the header is bold on a terminal.
    No column is wrapped: a long line stays one line (a terminal folds it).
    """
    header = [plain_text(cell) for cell in header]
    rows = [[plain_text(cell) for cell in row] for row in rows]
    sizes = {cell: _width(cell) for row in (header, *rows) for cell in row}  # each text once
    widths = [max(map(sizes.__getitem__, column)) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        padded = zip(cells, widths, strict=True)
        return "".join(
            [f" {_shown(cell, width)}{' ' * (width - sizes[cell])} " for cell, width in padded]
        )

    lines = lines_for(console)
    lines.write(((line(header), "bold"),))
    if rows:
        lines.write((("\n".join([line(row) for row in rows]), ""),))
    lines.flush()
