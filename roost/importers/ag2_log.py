"""AG2: the SQLite database of ``autogen.runtime_logging.start(logger_type="sqlite")``.

Its ``chat_completions`` rows hold each model call: ``source_name`` (the agent
that asked), the ``request`` (the messages the model was sent: the agent's
system message, then the chat so far, each other speaker's message under its
``name``) and the ``response`` (a ChatCompletion: the reply, its tool calls,
model and usage), with the call's start and end times. Each request holds the
whole chat so far, so what was said since the previous call is the part of it
not yet read; the agents' ``human_input_mode`` (``agents`` table) says whose
messages a person typed.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from roost.importers.ag2 import tool_call, tool_results
from roost.importers.common import TurnBuilder, sqlite_database, text_of, usage_of
from roost.importers.model import Conversation, ImportFormatError

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path


def read(path: Path) -> Conversation:
    """The conversation AG2's runtime log of model calls records."""
    file = path.name
    with sqlite_database(path, "chat_completions", "an AG2 runtime_logging database") as db:
        rows = db.execute(
            "SELECT id, source_name, request, response, start_time, end_time"
            " FROM chat_completions ORDER BY id"
        ).fetchall()
        people = _people(db)
    if not rows:
        raise ImportFormatError(f"{file}: the log holds no chat_completions rows")
    talk = Conversation([], source={"format": "ag2", "file": file, "shape": "runtime_logging"})
    build = TurnBuilder(talk.notes)
    seen = 0  # messages of the chat read so far (system messages aside)
    for row_id, source, request, response, start, end in rows:
        where = f"{file}: chat_completions row {row_id}"
        sent = _json(request, where, "request").get("messages")
        if not isinstance(sent, list):
            raise ImportFormatError(f"{where}: its request has no list of messages")
        chat = [m for m in sent if isinstance(m, dict) and m.get("role") != "system"]
        system = [m for m in sent if isinstance(m, dict) and m.get("role") == "system"]
        if system and str(source) not in talk.roles:
            talk.roles[str(source)] = text_of(system[0].get("content"))
        if len(chat) < seen:  # another chat began: what it holds is all new
            seen = 0
        for n, message in enumerate(chat[seen:], seen):
            _heard(build, message, f"{where}: message {n}", _iso(start), people)
        _replied(build, str(source), _json(response, where, "response"), where, _iso(end))
        seen = len(chat) + 1
    talk.turns = build.done()
    _notes(talk)
    return talk


def _people(db: sqlite3.Connection) -> set[str]:
    """The agents a person answers for (``human_input_mode: ALWAYS``)."""
    found: set[str] = set()
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'agents'").fetchone():
        return found
    for name, init_args in db.execute("SELECT name, init_args FROM agents"):
        try:
            mode = json.loads(init_args or "{}").get("human_input_mode")
        except (ValueError, AttributeError):
            continue
        if mode == "ALWAYS":
            found.add(str(name))
    return found


def _json(text: Any, where: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "")
    except ValueError as exc:
        raise ImportFormatError(f"{where}: its {what} is not JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise ImportFormatError(f"{where}: its {what} is not an object")
    return value


def _heard(
    build: TurnBuilder, message: dict[str, Any], where: str, ts: str | None, people: set[str]
) -> None:
    """A message of the chat before a model call: another's words, or a tool's results."""
    role = message.get("role")
    if role in ("tool", "function") or message.get("tool_responses"):
        build.results(where, tool_results(message, where))
    elif message.get("tool_calls"):
        speaker = str(message.get("name") or build.speaker or "assistant")
        build.tool_round(speaker, [tool_call(c, where) for c in message["tool_calls"]])
    else:
        speaker = str(message.get("name") or ("user" if role == "user" else "assistant"))
        human = speaker in people and bool(build.turns)
        build.say(speaker, text_of(message.get("content")), ts=ts, human=human)


def _replied(
    build: TurnBuilder, speaker: str, response: dict[str, Any], where: str, ts: str | None
) -> None:
    choices = response.get("choices")
    if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
        raise ImportFormatError(f"{where}: its response has no choices")
    message = choices[0].get("message") or {}
    usage, model = usage_of(response.get("usage")), response.get("model")
    model = str(model) if model else None
    if message.get("tool_calls"):
        calls = [tool_call(c, where) for c in message["tool_calls"]]
        build.tool_round(speaker, calls, model=model, usage=usage)
    else:
        build.say(speaker, text_of(message.get("content")), model=model, usage=usage, ts=ts)


def _iso(moment: Any) -> str | None:
    """AG2 logs UTC times as ``YYYY-MM-DD HH:MM:SS.ffffff``."""
    if not isinstance(moment, str) or len(moment) < 19:
        return None
    return moment.replace(" ", "T", 1) + ("" if moment.endswith("Z") else "Z")


def _notes(talk: Conversation) -> None:
    missing = [s for s in talk.speakers if s not in talk.roles]
    if missing:
        line = f"system messages: only a model's requests hold them; none for {', '.join(missing)}"
        talk.notes.append(line)
    talk.notes.append("what was said after the last model call: not in the log of model calls")
    talk.notes.append("speaker order: recorded as who spoke; how each was chosen is not")
