"""What the importers share: reading tool calls into replies, and checking shapes."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING, Any

from roost.importers.model import ImportedStep, ImportedTurn, ImportFormatError, ToolCall

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite(path: Path) -> bool:
    with path.open("rb") as file:
        return file.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


@contextmanager
def sqlite_database(path: Path, table: str, what: str) -> Iterator[sqlite3.Connection]:
    """The file opened read-only (nothing in it is run or followed), ``table`` checked."""
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if table not in tables:
                raise ImportFormatError(f"{path.name}: not {what} (no {table} table)")
            yield db
    except sqlite3.DatabaseError as exc:
        why = f"{path.name}: cannot be read as a SQLite database ({exc})"
        raise ImportFormatError(why) from exc


def arguments_of(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as an object (text that is JSON is read; else kept as text)."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and raw.strip():
        try:
            value = json.loads(raw)
        except ValueError:
            return {"text": raw}
        return value if isinstance(value, dict) else {"value": value}
    return {}


def usage_of(
    raw: Any, prompt: str = "prompt_tokens", completion: str = "completion_tokens"
) -> dict[str, int] | None:
    """A model call's token counts from the ``prompt`` and ``completion`` keys of a
    framework's record, as roost's usage spells them; None when the record is no object."""
    if not isinstance(raw, dict):
        return None
    return {
        "prompt_tokens": int(raw.get(prompt) or 0),
        "completion_tokens": int(raw.get(completion) or 0),
    }


def text_of(content: Any) -> str:
    """A message's content as text: a string as it is, parts' texts joined, else JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, str | dict) for p in content):
        parts = [p if isinstance(p, str) else str(p.get("text", "")) for p in content]
        if all(parts):
            return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


class TurnBuilder:
    """Collects replies: tool rounds are kept open until their speaker's text closes them."""

    def __init__(self, notes: list[str]) -> None:
        self.turns: list[ImportedTurn] = []
        self.notes = notes
        self.speaker: str | None = None
        self.steps: list[ImportedStep] = []

    def tool_round(self, speaker: str, calls: list[ToolCall], **step: Any) -> None:
        if self.steps and speaker != self.speaker:
            self._close_without_text()
        self.speaker = speaker
        self.steps.append(ImportedStep(tuple(calls), **step))

    def results(self, where: str, results: list[tuple[str, str, bool]]) -> None:
        """Gives each open call its result: ``(call id, content, is_error)``."""
        for call_id, content, is_error in results:
            for index, step in enumerate(self.steps):
                calls = list(step.tool_calls)
                for n, call in enumerate(calls):
                    if call.id == call_id and call.result is None:
                        calls[n] = ToolCall(call.id, call.name, call.arguments, content, is_error)
                        self.steps[index] = ImportedStep(tuple(calls), step.model, step.usage)
                        break
                else:
                    continue
                break
            else:
                raise ImportFormatError(f"{where}: tool result for {call_id!r} names no call")

    def say(self, speaker: str, content: str, **turn: Any) -> None:
        if self.steps and speaker != self.speaker:
            self._close_without_text()
        steps, self.steps, self.speaker = self.steps, [], None
        self.turns.append(ImportedTurn(speaker, content, steps, **turn))

    def done(self) -> list[ImportedTurn]:
        if self.steps:
            self._close_without_text()
        return self.turns

    def _close_without_text(self) -> None:
        assert self.speaker is not None
        line = "a tool round with no reply after it: its reply is recorded as empty text"
        if line not in self.notes:
            self.notes.append(line)
        speaker, steps, self.steps, self.speaker = self.speaker, self.steps, [], None
        self.turns.append(ImportedTurn(speaker, "", steps))


def expect_list(data: Any, where: str, what: str) -> list[Any]:
    if not isinstance(data, list):
        raise ImportFormatError(f"{where}: expected {what}, found {type(data).__name__}")
    return data


def expect_object(item: Any, where: str, what: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ImportFormatError(f"{where}: expected {what}, found {type(item).__name__}")
    return item
