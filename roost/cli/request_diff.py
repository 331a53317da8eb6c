"""Why a replayed model call differs: the two requests, as a short unified diff.

An ``llm_call`` records only a digest of its request. When a replay's digest
differs, the recorded request is rebuilt by replaying the run under its own
flow up to that call, the replayed one by replaying it again as the user
asked, and the two are shown line by line: system prompt, tools, messages.
"""

from __future__ import annotations

import asyncio
import difflib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.markup import escape

from roost.events import Event, LlmCallEvent
from roost.flow.models import Flow
from roost.messages import AssistantMessage, ModelRequest, ToolResultMessage

if TYPE_CHECKING:
    from roost.engine.replay import ReplayReport
    from roost.ports import ImageStore

MAX_LINES = 40  # of diff: enough to see what moved, short enough to read


def explain_request(
    events: Sequence[Event],
    flow: Flow | None,
    recorded: Event | None,
    replayed: Event | None,
    live_tools: bool = False,
    images: ImageStore | None = None,
) -> list[str]:
    """Lines (rich markup) showing how the first differing request differs; [] otherwise.

    ``images`` is where the run keeps its images, which requests are rebuilt with."""
    if not isinstance(recorded, LlmCallEvent) or not isinstance(replayed, LlmCallEvent):
        return []
    if recorded.request_digest == replayed.request_digest:
        return []
    seq = replayed.seq
    new = _request_at(events, flow, seq, live_tools, images)
    old = new if flow is None and not live_tools else _request_at(events, None, seq, False, images)
    head = f"the request of {escape(replayed.node)}'s model call (event {seq}) differs:"
    if old.request is None or new.request is None:
        return [head, "[dim](it could not be rebuilt: the replay did not reach it)[/]"]
    names = (
        "recorded (the run's own flow)",
        f"replayed ({flow.path})" if flow is not None else "replayed",
    )
    lines = _diff(request_lines(old.request), request_lines(new.request), names)
    if not lines:  # the same messages: the provider's settings may be what changed
        lines = _diff(settings_lines(old.settings), settings_lines(new.settings), names)
    if not lines:
        return [
            head,
            "[dim]the run's own flow builds this request as replayed: the difference comes "
            "from outside the flow (another roost version, or the environment its ${VARS} "
            "read)[/]",
        ]
    shown = [_colour(line) for line in lines[:MAX_LINES]]
    if len(lines) > MAX_LINES:
        shown.append(f"[dim]… {len(lines) - MAX_LINES} more lines of difference[/]")
    return [head, *shown]


def request_lines(request: ModelRequest) -> list[str]:
    """A request as lines of text: what a diff of two requests compares."""
    lines = ["system:", *_indented(request.system)]
    lines.append("tools: " + (", ".join(t.name for t in request.tools) or "(none)"))
    if request.reply_format is not None:  # an agent's reply_format: part of what is asked
        schema = json.dumps(request.reply_format.json_schema, ensure_ascii=False, sort_keys=True)
        lines.append(f"reply format: {schema}")
    lines.append("messages:")
    for message in request.messages:
        if isinstance(message, ToolResultMessage):
            mark = " (error)" if message.is_error else ""
            lines += _indented(message.content, f"[tool {message.name}{mark}] ")
        elif isinstance(message, AssistantMessage):
            if message.content:
                lines += _indented(message.content, "[assistant] ")
            for call in message.tool_calls:
                arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
                lines.append(f"  [assistant] calls {call.name}({arguments})")
        else:
            lines += _indented(message.content, f"[{message.role}] ")
            lines += [f"  [{message.role}] image {i.hash} ({i.media_type})" for i in message.images]
    return lines


def settings_lines(settings: str) -> list[str]:
    """A provider's request settings (``request_settings``' text) as lines, set ones only."""
    lines = ["provider settings:"]
    for entry in json.loads(settings) if settings else []:
        name = entry.pop("name")
        shown = ", ".join(
            f"{key} {json.dumps(value)}" for key, value in entry.items() if value is not None
        )
        lines.append(f"  {name}: {shown}")
    return lines


def _diff(old: list[str], new: list[str], names: tuple[str, str]) -> list[str]:
    return list(difflib.unified_diff(old, new, *names, n=2, lineterm=""))


def _request_at(
    events: Sequence[Event],
    flow: Flow | None,
    seq: int,
    live_tools: bool,
    images: ImageStore | None = None,
) -> ReplayReport:
    from roost.engine.replay import replay_run

    return asyncio.run(
        replay_run(
            flow, events, until=seq, live_tools=live_tools or None, capture=seq, images=images
        )
    )


def _indented(text: str, first: str = "") -> list[str]:
    rows = text.splitlines() or [""]
    pad = " " * len(first)
    return [f"  {first if i == 0 else pad}{row}" for i, row in enumerate(rows)]


def _colour(line: str) -> str:
    text = escape(line)
    if line.startswith(("---", "+++", "@@")):
        return f"[dim]{text}[/]"
    if line.startswith("-"):
        return f"[red]{text}[/]"
    if line.startswith("+"):
        return f"[green]{text}[/]"
    return text
