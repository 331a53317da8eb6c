"""LangGraph: a SqliteSaver database (``langgraph-checkpoint-sqlite``).

Its ``checkpoints`` table holds each step's state of a thread; the latest one's
``messages`` channel is the conversation (LangChain messages: human, ai with
tool calls, tool, system). Its ``writes`` table says which node wrote each
message (``task_path``) and which task was resumed with a person's answer
(``__resume__``); the checkpoints' ids (UUID version 6) say when each step was saved.

Values are LangGraph's msgpack, whose extension types name a Python class and
its fields. They are read as data with ``msgpack`` (the ``roost[langgraph]``
extra): no class is imported, and a ``pickle`` value is refused, never loaded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

from roost.importers.common import TurnBuilder, arguments_of, sqlite_database, text_of, usage_of
from roost.importers.model import Conversation, ImportFormatError, ToolCall

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

INPUT = "__start__"  # the task that writes a graph's input
UUID_EPOCH = 0x01B21DD213814000  # 100 ns steps from 1582-10-15 to 1970-01-01
KINDS = {"AIMessageChunk": "ai", "HumanMessageChunk": "human", "ToolMessageChunk": "tool"}


@dataclass(frozen=True, slots=True)
class Foreign:
    """A value LangGraph serialised from a Python object: its class named, its fields as data."""

    module: str
    name: str
    value: Any


@dataclass(frozen=True, slots=True)
class Written:
    """Who wrote a message: the node, whether a person's answer resumed it, the step's time."""

    node: str
    resumed: bool
    ts: str | None


def read(path: Path, thread: str | None) -> Conversation:
    """The conversation of one thread of a SqliteSaver database."""
    file = path.name
    with sqlite_database(path, "checkpoints", "a LangGraph SqliteSaver database") as db:
        chosen = _thread(db, file, thread)
        where = f"{file}: thread {chosen!r}"
        latest_id, latest = _latest(db, chosen, where)
        writers = _writers(db, chosen, _lineage(db, chosen, latest_id), where)
    messages = _messages(latest, where)
    talk = Conversation([], source={"format": "langgraph", "file": file, "thread": chosen})
    talk.turns = _turns(messages, writers, talk, where)
    _notes(talk, writers)
    return talk


# ------------------------------------------------------------------ the database


def _thread(db: sqlite3.Connection, file: str, thread: str | None) -> str:
    query = "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = '' ORDER BY 1"
    threads = [str(row[0]) for row in db.execute(query)]
    if not threads:
        raise ImportFormatError(f"{file}: the database holds no checkpoints")
    if thread is not None and thread not in threads:
        raise ImportFormatError(f"{file}: no thread {thread!r}; it holds {', '.join(threads)}")
    if thread is None and len(threads) > 1:
        raise ImportFormatError(
            f"{file}: {len(threads)} threads ({', '.join(threads)}): pick one with --thread"
        )
    return thread or threads[0]


def _latest(db: sqlite3.Connection, thread: str, where: str) -> tuple[str, Any]:
    row = db.execute(
        "SELECT checkpoint_id, type, checkpoint FROM checkpoints"
        " WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
        (thread,),
    ).fetchone()
    return str(row[0]), decode(row[1], row[2], f"{where}: the latest checkpoint")


def _lineage(db: sqlite3.Connection, thread: str, latest: str) -> dict[str, str]:
    """Each step of the latest checkpoint's history, its parent to it: a thread whose past was
    forked (LangGraph's time travel) keeps its abandoned steps, which are not this history."""
    parents = dict(
        db.execute(
            "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints"
            " WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread,),
        ).fetchall()
    )
    children: dict[str, str] = {}
    current = latest
    while parents.get(current) and current not in children.values():
        children[str(parents[current])] = current
        current = str(parents[current])
    return children


def _writers(
    db: sqlite3.Connection, thread: str, children: dict[str, str], where: str
) -> dict[str, Written]:
    """Each message id written by a task of the history: its node, whether it was resumed,
    when (the time of the checkpoint its step made)."""
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    if "writes" not in tables:
        return {}
    columns = {row[1] for row in db.execute("PRAGMA table_info(writes)")}
    path = "task_path" if "task_path" in columns else "''"  # older savers kept no task path
    saved = {parent: checkpoint_time(child) for parent, child in children.items()}
    rows = db.execute(
        f"SELECT checkpoint_id, task_id, {path}, channel, type, value FROM writes"
        " WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id, task_id, idx",
        (thread,),
    ).fetchall()
    resumed = {(r[0], r[1]) for r in rows if r[3] == "__resume__"}
    found: dict[str, Written] = {}
    for step, task, task_path, channel, kind, value in rows:
        if channel != "messages" or str(step) not in children:
            continue
        written = Written(_node(str(task_path)), (step, task) in resumed, saved.get(str(step)))
        for message in _listed(decode(kind, value, f"{where}: a write of step {step}")):
            if isinstance(message, Foreign) and isinstance(message.value, dict):
                found.setdefault(_key(message.value), written)
    return found


def _key(message: dict[str, Any]) -> str:
    """A message's id; a node's own message has none until LangGraph's reducer gives it one,
    so then its kind and text (as the state holds it with the id it was given)."""
    if message.get("id"):
        return str(message["id"])
    return f"{message.get('type')}: {text_of(message.get('content'))}"


def _node(task_path: str) -> str:
    """The node of a task path as LangGraph writes it: ``~__pregel_pull, NODE``."""
    return task_path.rsplit(", ", 1)[-1].strip() or INPUT


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def checkpoint_time(checkpoint_id: str) -> str | None:
    """When a checkpoint was saved, from its id: LangGraph's ids are UUID version 6."""
    try:
        uuid = UUID(checkpoint_id)
    except ValueError:
        return None
    if uuid.version != 6:
        return None
    ticks = ((uuid.int >> 80) << 12) | ((uuid.int >> 64) & 0x0FFF)
    moment = datetime.fromtimestamp((ticks - UUID_EPOCH) / 10**7, UTC)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


# ------------------------------------------------------------------ LangGraph's serialised values


def decode(kind: Any, blob: Any, where: str) -> Any:
    """A value as LangGraph's serializer typed it, read as data (classes named, never imported)."""
    if kind == "null" or blob is None:
        return None
    if kind in ("bytes", "bytearray"):
        return bytes(blob)
    if kind == "msgpack":
        return _unpack(bytes(blob), where)
    if kind == "json":
        try:
            return json.loads(blob, object_hook=_revive)
        except ValueError as exc:
            raise ImportFormatError(f"{where}: its JSON does not read ({exc})") from exc
    if kind == "pickle":
        raise ImportFormatError(f"{where}: a pickled value, which roost never loads")
    raise ImportFormatError(f"{where}: values serialised as {kind!r}, which roost does not read")


def _unpack(blob: bytes, where: str) -> Any:
    try:
        import msgpack
    except ImportError as exc:
        raise ImportFormatError(
            "--from langgraph reads LangGraph's msgpack: pip install 'roost[langgraph]'"
        ) from exc
    try:
        return msgpack.unpackb(blob, ext_hook=_extension, strict_map_key=False)
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise ImportFormatError(f"{where}: its msgpack does not read ({exc})") from exc


def _extension(code: int, data: bytes) -> Any:
    """LangGraph's extension types: 0-5 a class and its arguments, 7 a channel's snapshot."""
    import msgpack

    payload = msgpack.unpackb(data, ext_hook=_extension, strict_map_key=False)
    if code == 7:
        return payload
    if code <= 5 and isinstance(payload, list | tuple) and len(payload) >= 3:
        return Foreign(str(payload[0]), str(payload[1]), payload[2])
    return Foreign("", f"extension {code}", None)


def _revive(item: dict[str, Any]) -> Any:
    """LangChain's JSON form of an object (``lc``, ``type: constructor``, ``id``, ``kwargs``)."""
    if (
        item.get("lc") == 1
        and item.get("type") == "constructor"
        and isinstance(item.get("id"), list)
    ):
        path = [str(part) for part in item["id"]]
        return Foreign(".".join(path[:-1]), path[-1], item.get("kwargs") or {})
    return item


# ------------------------------------------------------------------ the messages


def _messages(checkpoint: Any, where: str) -> list[dict[str, Any]]:
    values = checkpoint.get("channel_values") if isinstance(checkpoint, dict) else None
    if not isinstance(values, dict):
        raise ImportFormatError(f"{where}: the latest checkpoint has no channel_values")
    listed = values.get("messages")
    if not isinstance(listed, list):
        raise ImportFormatError(f"{where}: the latest checkpoint holds no 'messages'")
    messages = []
    for n, item in enumerate(listed):
        if not (isinstance(item, Foreign) and isinstance(item.value, dict)):
            raise ImportFormatError(f"{where}: message {n} is not a LangChain message")
        fields = dict(item.value)
        fields["type"] = KINDS.get(str(fields.get("type")), fields.get("type"))
        messages.append(fields)
    return messages


def _turns(
    messages: list[dict[str, Any]], writers: dict[str, Written], talk: Conversation, where: str
) -> list[Any]:
    build = TurnBuilder(talk.notes)
    system = ""
    for n, message in enumerate(messages):
        kind, at = message.get("type"), f"{where}: message {n}"
        written = writers.get(str(message.get("id"))) or writers.get(_key({**message, "id": None}))
        if kind == "system":
            system = text_of(message.get("content"))
        elif kind == "tool":
            results = [
                (
                    str(message.get("tool_call_id")),
                    text_of(message.get("content")),
                    _failed(message),
                )
            ]
            build.results(at, results)
        elif kind == "human":
            # The first is what started the thread; each later one a person's answer
            # (to an interrupt, or the next input of the thread).
            human = bool(build.turns) or (written is not None and written.resumed)
            build.say(
                _name(message, "user"),
                text_of(message.get("content")),
                ts=_ts(written),
                human=human,
            )
        elif kind == "ai":
            speaker = (
                written.node if written and written.node != INPUT else _name(message, "assistant")
            )
            if system and speaker not in talk.roles:
                talk.roles[speaker] = system
            _said(build, speaker, message, written, at)
        else:
            raise ImportFormatError(f"{at}: a {kind!r} message, which roost does not read")
    return build.done()


def _said(
    build: TurnBuilder, speaker: str, message: dict[str, Any], written: Written | None, at: str
) -> None:
    usage = usage_of(message.get("usage_metadata"), "input_tokens", "output_tokens")
    model = _model(message)
    calls = message.get("tool_calls") or []
    if calls:
        build.tool_round(speaker, [_call(c, at) for c in calls], model=model, usage=usage)
    else:
        text = text_of(message.get("content"))
        build.say(speaker, text, model=model, usage=usage, ts=_ts(written))


def _call(raw: Any, at: str) -> ToolCall:
    if not isinstance(raw, dict):
        raise ImportFormatError(f"{at}: a tool call that is not an object")
    return ToolCall(str(raw.get("id")), str(raw.get("name")), arguments_of(raw.get("args")))


def _failed(message: dict[str, Any]) -> bool:
    return message.get("status") == "error"


def _name(message: dict[str, Any], default: str) -> str:
    return str(message.get("name") or default)


def _ts(written: Written | None) -> str | None:
    return written.ts if written else None


def _model(message: dict[str, Any]) -> str | None:
    metadata = message.get("response_metadata")
    if not isinstance(metadata, dict):
        return None
    model = metadata.get("model_name") or metadata.get("model")
    return str(model) if model else None


def _notes(talk: Conversation, writers: dict[str, Written]) -> None:
    if not writers:
        talk.notes.append("nodes and times: the database keeps no writes; speakers by message name")
    missing = [s for s in talk.speakers if s not in talk.roles and s != "user"]
    if missing:
        talk.notes.append(
            f"system messages: not in the checkpoints for {', '.join(missing)}"
            " (a node's prompt is not part of the state); no role"
        )
    talk.notes.append("speaker order: recorded as which node ran; the graph's edges are not")
