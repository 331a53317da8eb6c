"""A ``Conversation`` becomes a roost flow and the events of a run under it.

The flow has an agent per speaker (its system message as its role), a channel
when more than two speak or they do not take turns, and two ``scripted``
providers: ``recorded`` holding the models' replies in order and
``director`` holding the channel's choices. The events are made by roost's own
replay, fed the recorded answers: so they are exactly what the flow makes, and
``roost replay`` of the stored run is identical.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from roost.engine.flows import flow_record
from roost.engine.replay import replay_run
from roost.events import (
    Event,
    LlmCallEvent,
    LlmResponse,
    LlmUsage,
    MessageEvent,
    RecordedToolCall,
    ResumeEvent,
    RunStartEvent,
    TerminateEvent,
    ToolCallEvent,
    ToolResultEvent,
    event_dict,
)
from roost.flow.loader import load_flow_text
from roost.importers.model import Conversation, ImportedTurn, ImportFormatError

CHANNEL = "chat"
STAND_IN = "roost.importers.recorded:not_recorded"


def node_names(speakers: list[str]) -> dict[str, str]:
    """Each original speaker's node name: letters, digits and ``_``, unique, not the channel's."""
    names: dict[str, str] = {}
    taken = {CHANNEL}
    for speaker in speakers:
        base = re.sub(r"\W", "_", speaker, flags=re.ASCII).strip("_") or "speaker"
        if base[0].isdigit():
            base = f"a_{base}"
        name, n = base, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        names[speaker] = name
    return names


def uses_channel(turns: list[ImportedTurn]) -> bool:
    """A channel when more than two speak, or when a speaker speaks twice in a row."""
    speakers = {turn.speaker for turn in turns}
    repeats = any(a.speaker == b.speaker for a, b in itertools.pairwise(turns))
    return len(speakers) > 2 or repeats


def flow_text(talk: Conversation, title: str) -> str:
    """The derived flow's YAML."""
    if len(talk.turns) < 2 or len(talk.speakers) < 2:
        raise ImportFormatError("the conversation has fewer than two speakers: nothing to replay")
    names = node_names(talk.speakers)
    channel = uses_channel(talk.turns)
    total = len(talk.turns)
    doc: dict[str, Any] = {
        "roost": 1,
        "name": title,
        "description": f"imported from {talk.source.get('format')}: {talk.source.get('file')}",
        "defaults": {"provider": "recorded", "max_rounds": total},
        "providers": {"recorded": _scripted(_replies(talk))},
    }
    tools = _tools(talk)
    if tools:
        doc["tools"] = tools
    doc["agents"] = {names[s]: _agent(talk, s, names[s]) for s in talk.speakers}
    first = talk.turns[0]
    if channel:
        choices = [names[t.speaker] for t in talk.turns[1:] if not t.human] or [""]
        doc["providers"]["director"] = _scripted(choices)
        doc["channels"] = {
            CHANNEL: {
                "members": [names[s] for s in talk.speakers],
                "max_rounds": total,
                "director": {"strategy": "llm", "provider": "director", "allow_repeat": True},
            }
        }
        to = CHANNEL
    else:
        to = names[talk.turns[1].speaker]
    doc["start"] = {"from": names[first.speaker], "to": to, "content": literal(first.content)}
    return yaml.safe_dump(no_placeholders(doc), sort_keys=False, allow_unicode=True, width=100)


def literal(text: str) -> str:
    """Recorded text as a template that renders to itself: roles and the start message are
    Jinja templates, and what another engine recorded is data, never template code."""
    if not any(mark in text for mark in ("{{", "{%", "{#")):
        return text
    # A raw block ends at the first "endraw", so the word is written outside the blocks.
    return "{{ 'endraw' }}".join(
        f"{{% raw %}}{part}{{% endraw %}}" for part in text.split("endraw")
    )


def no_placeholders(value: Any) -> Any:
    """Every string with ``${`` written ``$${``: a flow's ``${NAME}`` reads the environment when
    it loads, and a recorded text must not decide what is read from it."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, list):
        return [no_placeholders(item) for item in value]
    if isinstance(value, dict):
        return {key: no_placeholders(item) for key, item in value.items()}
    return value


def _scripted(replies: list[Any]) -> dict[str, Any]:
    return {"kind": "scripted", "replies": replies}


def _replies(talk: Conversation) -> list[Any]:
    """What the models answered, in order: each tool round, then each reply's text."""
    replies: list[Any] = []
    for turn in talk.turns[1:]:
        if turn.human:
            continue
        for step in turn.steps:
            calls = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in step.tool_calls
            ]
            replies.append({"tool_calls": calls})
        replies.append(turn.content)
    return replies or [""]


def _tools(talk: Conversation) -> dict[str, Any]:
    names = {c.name for t in talk.turns for s in t.steps for c in s.tool_calls}
    return {
        name: {
            "python": STAND_IN,
            "description": f"{name}, as recorded by {talk.source.get('format')}",
            "parameters": {"type": "object"},
        }
        for name in sorted(names)
    }


def _agent(talk: Conversation, speaker: str, name: str) -> dict[str, Any]:
    agent: dict[str, Any] = {"description": f"{speaker} in the imported run"}
    if speaker in talk.roles:
        agent["role"] = literal(talk.roles[speaker])
    tools = sorted(
        {c.name for t in talk.turns if t.speaker == speaker for s in t.steps for c in s.tool_calls}
    )
    if tools:
        agent["functions"] = tools
    if any(t.human for t in talk.turns if t.speaker == speaker):
        agent["interrupt"] = "ALWAYS"
    return agent


def derive(talk: Conversation, run_id: str, title: str) -> tuple[str, list[Event]]:
    """The derived flow's text and the events of its run ``run_id``."""
    text = flow_text(talk, title)
    flow = load_flow_text(text, f"{title}.yaml")
    sketch = _sketch(talk, run_id, flow_record(flow))
    report = asyncio.run(replay_run(flow, sketch))
    events = report.events
    said = sum(isinstance(e, MessageEvent) for e in events)
    if report.stopped or said != len(talk.turns):
        why = report.stopped or f"{said} of {len(talk.turns)} messages were made again"
        raise ImportFormatError(f"the conversation cannot be replayed as recorded: {why}")
    return text, _finish(events, talk)


def _sketch(talk: Conversation, run_id: str, record: Any) -> list[Event]:
    """What the replay is fed: the start, each model answer, tool result and person's answer."""
    names = node_names(talk.speakers)
    channel = uses_channel(talk.turns)
    made: list[dict[str, Any]] = []

    def add(kind: type[Event], **fields: Any) -> None:
        made.append({"kind": kind, "seq": len(made), "run": run_id, "ts": "", **fields})

    first = talk.turns[0]
    add(RunStartEvent, flow=record)
    to = CHANNEL if channel else names[talk.turns[1].speaker]
    add(MessageEvent, **{"from": names[first.speaker], "to": to, "content": first.content})
    previous = names[first.speaker]
    for turn in talk.turns[1:]:
        name = names[turn.speaker]
        if channel and not turn.human:
            response = LlmResponse(text=name)
            add(
                LlmCallEvent,
                node=CHANNEL,
                provider="director",
                model="recorded",
                request_digest="",
                response=response,
            )
        if turn.human:
            add(
                ResumeEvent,
                **{"from": name, "to": CHANNEL if channel else previous, "feedback": turn.content},
            )
        else:
            _model_calls(add, turn, name)
        previous = name
    # The sketch ends as a finished run, so the replay makes every step to its end.
    add(TerminateEvent, node=previous)
    return [entry.pop("kind").model_validate(entry) for entry in made]


def _model_calls(add: Any, turn: ImportedTurn, name: str) -> None:
    for step in turn.steps:
        calls = tuple(
            RecordedToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in step.tool_calls
        )
        _recorded_call(add, name, step.model, LlmResponse(tool_calls=calls), step.usage)
        for c in step.tool_calls:
            add(ToolCallEvent, agent=name, id=c.id, name=c.name, arguments=c.arguments)
            content = c.result if c.result is not None else "no result was recorded"
            add(
                ToolResultEvent,
                agent=name,
                id=c.id,
                name=c.name,
                content=content,
                is_error=c.is_error or c.result is None,
            )
    _recorded_call(add, name, turn.model, LlmResponse(text=turn.content), turn.usage)


def _recorded_call(
    add: Any, node: str, model: str | None, response: LlmResponse, usage: dict[str, int] | None
) -> None:
    """One model call of the imported run, as a replay reads it: answered by ``recorded``."""
    add(
        LlmCallEvent,
        node=node,
        provider="recorded",
        model=model or "unknown",
        request_digest="",
        response=response,
        usage=LlmUsage(**usage) if usage else None,
    )


def _finish(events: list[Event], talk: Conversation) -> list[Event]:
    """The events with the recorded times (else the import's, in order) and where they came from."""
    times = _times(events, talk)
    done: list[Event] = []
    for event, ts in zip(events, times, strict=True):
        data = event_dict(event) | {"ts": ts}
        if isinstance(event, RunStartEvent):
            data["imported"] = {**talk.source, "notes": list(talk.notes)}
        done.append(type(event).model_validate(data))
    return done


def _times(events: list[Event], talk: Conversation) -> list[str]:
    recorded = [turn.ts for turn in talk.turns]
    if not any(recorded):
        if "times" not in " ".join(talk.notes):
            talk.notes.append("times: not recorded; the events carry the import's time, in order")
        base = datetime.now(UTC)
        return [_iso(base + timedelta(milliseconds=e.seq)) for e in events]
    first = next(ts for ts in recorded if ts)
    times, current, said = [], first, 0
    for event in events:
        if isinstance(event, MessageEvent) and said < len(recorded):
            current = recorded[said] or current
            said += 1
        times.append(current)
    return times


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")
