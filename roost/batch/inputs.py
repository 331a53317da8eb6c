"""A batch's inputs: rows of JSON Lines or CSV, each a start message and optional vars.

JSON Lines: one object a line, ``{"message": "...", "vars": {...}}``; blank lines
are skipped. CSV: a header, then a row a record; the ``message`` column is the
start message, every other column a var (an empty cell leaves the flow's own
value). A row that cannot be read (not JSON, nested deeper than a flow's vars
may be, not an object, a key roost does not know, bytes that are not UTF-8,
more cells than columns, a quote never closed) is a ``BadRow`` naming its
line, and the other rows go on; only a file that cannot be read at all is a
UsageError. CSV is read strictly: a broken record is a bad row, and reading
goes on at the line after the one it began on (a quote left open would
otherwise take every later line into its cell, silently).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roost.errors import UsageError
from roost.flow.yamlread import MAX_DEPTH

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
MESSAGE = "message"
_JSONL_KEYS = (MESSAGE, "vars")


@dataclass(frozen=True, slots=True)
class Row:
    """One row: its line in the inputs, its start message (None: the flow's) and its vars."""

    line: int
    message: str | None
    vars: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BadRow:
    """A row that cannot run, and why."""

    line: int
    problem: str


def input_format(path: Path) -> str:
    """``jsonl`` or ``csv``, from the file's suffix; UsageError for any other."""
    found = FORMATS.get(path.suffix.lower())
    if found is None:
        raise UsageError(f"{path}: give the inputs as a .jsonl or .csv file")
    return found


def read_inputs(path: Path) -> list[Row | BadRow]:
    """Every row of the inputs file at ``path``, in order."""
    kind = input_format(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise UsageError(f"{path}: is a folder; give the inputs file") from None
    except FileNotFoundError:
        raise UsageError(f"{path}: no such inputs file") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    # Bytes that are not UTF-8 are kept as surrogates, so that only their rows fail.
    text = data.decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")
    rows = list(_jsonl(text) if kind == "jsonl" else _csv(text, path))
    if not rows:
        raise UsageError(f"{path}: holds no rows")
    return rows


def _jsonl(text: str) -> Iterator[Row | BadRow]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if not _is_text(line):
            yield BadRow(number, "not valid UTF-8")
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            yield BadRow(number, f"not valid JSON: {exc.msg} (column {exc.colno})")
            continue
        except RecursionError:  # the decoder recurses once a level
            item = None
        if item is None or _deeper_than(item, MAX_DEPTH):
            # A row's vars are written into the flow, whose YAML nests MAX_DEPTH levels at
            # most (a row and a flow hold their vars at the same depth).
            yield BadRow(number, f"nested deeper than {MAX_DEPTH} levels")
            continue
        yield _json_row(number, item)


def _deeper_than(item: Any, limit: int) -> bool:
    """Whether ``item``'s lists and objects nest more than ``limit`` levels (no recursion)."""
    todo: list[tuple[Any, int]] = [(item, 1)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, dict | list):
            if depth > limit:
                return True
            children = value.values() if isinstance(value, dict) else value
            todo.extend((child, depth + 1) for child in children)
    return False


def _json_row(number: int, item: Any) -> Row | BadRow:
    if not isinstance(item, dict):
        return BadRow(number, 'a row is a JSON object: {"message": "...", "vars": {...}}')
    unknown = [key for key in item if key not in _JSONL_KEYS]
    if unknown:
        return BadRow(number, f"unknown key {unknown[0]!r} (a row has message and vars)")
    message = item.get(MESSAGE)
    if message is not None and not isinstance(message, str):
        return BadRow(number, "message: expected a string")
    variables = item.get("vars", {})
    if not isinstance(variables, dict):
        return BadRow(number, "vars: expected an object of var names and values")
    return Row(number, message, variables)


def _csv(text: str, path: Path) -> Iterator[Row | BadRow]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        raise UsageError(f"{path}:1: the header is not valid CSV: {_csv_problem(exc)}") from None
    if not all(_is_text(name) for name in header):
        raise UsageError(f"{path}:1: the header is not valid UTF-8")
    names = [name.strip() for name in header]
    if len(set(names)) != len(names):
        twice = next(name for name in names if names.count(name) > 1)
        raise UsageError(f"{path}:1: the column {twice!r} is named twice")
    yield from _csv_records(text, names, reader.line_num + 1)


def _csv_records(text: str, names: list[str], first: int) -> Iterator[Row | BadRow]:
    """The records from line ``first`` on; after a broken one, reading starts again at the
    line after the one it began on (a loop, not recursion: a file may break often)."""
    lines = list(io.StringIO(text, newline=""))  # split where the csv module splits them
    start = first
    while start <= len(lines):
        rest = (lines[at] for at in range(start - 1, len(lines)))
        reader = csv.reader(rest, strict=True)
        offset = start - 1  # the reader counts lines from where it was started
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield BadRow(start, f"not valid CSV: {_csv_problem(exc)}")
                start += 1
                break
            yield _csv_row(start, names, cells)
            start = offset + reader.line_num + 1


def _csv_problem(error: csv.Error) -> str:
    """What is wrong with a record, in words (the csv module's end of data is a quote)."""
    if "unexpected end of data" in str(error):
        return "a quote opened in this row is never closed"
    return str(error)


def _csv_row(number: int, names: list[str], cells: list[str]) -> Row | BadRow:
    if not any(cell.strip() for cell in cells):
        return BadRow(number, "an empty row")
    if len(cells) > len(names):
        return BadRow(number, f"{len(cells)} cells, and the header names {len(names)} columns")
    if not all(_is_text(cell) for cell in cells):
        return BadRow(number, "not valid UTF-8")
    values = {name: cell for name, cell in zip(names, cells, strict=False) if cell != ""}
    message = values.pop(MESSAGE, None)
    return Row(number, message, values)


def _is_text(text: str) -> bool:
    """False when decoding left a surrogate for a byte that is not UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def row_problem(row: Row, declared: dict[str, Any], has_start: bool) -> str | None:
    """Why ``row`` cannot run the flow: a var it does not declare, no message to send."""
    for name in row.vars:
        if name not in declared:
            known = ", ".join(declared) or "none"
            return f"unknown var {name!r} (the flow's vars: {known})"
    if row.message is None and not has_start:
        return "no message, and the flow has no start message"
    return None
