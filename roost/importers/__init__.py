"""Runs recorded by other engines, read into roost runs (``roost import --from``).

One module per format reads the parsed file into a neutral ``Conversation``
(``model``); ``derive`` makes the flow and the events of a run from it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from roost.importers.common import is_sqlite
from roost.importers.model import Conversation, ImportFormatError

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from roost.events import Event

FORMATS = ("ag2", "agentchat", "langgraph", "otel")
MAX_BYTES = 200 * 1024 * 1024  # a bigger file is refused before it is read


def _reader(name: str) -> Callable[[Any, str], Conversation]:
    from roost.importers import ag2, agentchat, otel

    readers: dict[str, Callable[[Any, str], Conversation]] = {
        "ag2": ag2.read, "agentchat": agentchat.read, "otel": otel.read,
    }  # fmt: skip
    return readers[name]


def read_file(path: Path, fmt: str, thread: str | None = None) -> Conversation:
    """The conversation the file at ``path`` holds, read as format ``fmt``."""
    if fmt not in FORMATS:
        raise ImportFormatError(f"--from {fmt!r}: use one of {', '.join(FORMATS)}")
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise ImportFormatError(
            f"{path.name}: {size:,} bytes, over the {MAX_BYTES // 2**20} MB an import reads"
        )
    if fmt == "langgraph":
        from roost.importers import langgraph

        return langgraph.read(path, thread)
    if thread is not None:
        raise ImportFormatError("--thread picks a LangGraph thread: use it with --from langgraph")
    if fmt == "ag2" and is_sqlite(path):
        from roost.importers import ag2_log

        return ag2_log.read(path)
    read = _reader(fmt)
    return read(_otlp_lines(path) if fmt == "otel" else _json(path), path.name)


def _otlp_lines(path: Path) -> Any:
    """OTLP JSON as one document, or as the collector's file exporter writes it: one a line."""
    lines = [line for line in path.read_bytes().splitlines() if line.strip()]
    if len(lines) < 2:
        return _json(path)
    merged: list[Any] = []
    for number, line in enumerate(lines, 1):
        try:
            document = json.loads(line)
        except ValueError:
            return _json(path)  # one document over several lines: read whole, errors located
        if not isinstance(document, dict) or "resourceSpans" not in document:
            raise ImportFormatError(f"{path.name}:{number}: error: not an OTLP JSON export")
        merged.extend(document["resourceSpans"])
    return {"resourceSpans": merged}


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{path.name}: not UTF-8 text ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            f"{path.name}:{exc.lineno}:{exc.colno}: error: not JSON: {exc.msg}"
        ) from exc


def import_run(
    path: Path, fmt: str, run_id: str, thread: str | None = None
) -> tuple[str, list[Event], list[str]]:
    """The derived flow's text, its run's events and the notes on what the file did not say."""
    from roost.importers.derive import derive

    talk = read_file(path, fmt, thread)
    title = f"imported-{fmt}-{path.stem}"
    text, events = derive(talk, run_id, title)
    return text, events, talk.notes
