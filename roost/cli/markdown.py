"""A run's transcript as Markdown (``/dump`` in ``roost chat``): to read, share or keep.

Messages keep their text as written (models write Markdown, so it renders as
they meant it); tool calls and results are code blocks; waits, answers, errors,
retries and the end of the run are notes in italics. What ``roost show``
prints, in a form other programs render.
"""

from __future__ import annotations

import json
import re

from roost.cli.person import Answerer, answerers
from roost.events import (
    BudgetEvent,
    ErrorEvent,
    Event,
    InterruptEvent,
    LlmCallEvent,
    MessageEvent,
    ResumeEvent,
    RetryEvent,
    RunStartEvent,
    TerminateEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from roost.pricing import run_cost
from roost.runstate import fold

_MARKUP = re.compile(r"([\\`*_\[\]<>#|])")


def transcript_markdown(events: list[Event], *, title: str | None = None) -> str:
    """The whole run as one Markdown document."""
    state = fold(events)
    start = events[0] if events and isinstance(events[0], RunStartEvent) else None
    name = start.flow.name if start else "run"
    heading = name + (f" — {title}" if title else "")
    parts = [f"# {_plain(heading)}"]
    if start is not None:
        parts.append(
            f"Run `{start.run}` of `{start.flow.path}`, started {start.ts[:19].replace('T', ' ')}"
            f" UTC; {state.status}."
        )
    parts += [
        block
        for answerer, event in answerers(events)
        if (block := _block(event, answerer)) is not None
    ]
    usage = state.usage
    calls = sum(1 for event in events if isinstance(event, LlmCallEvent))
    parts.append(
        f"---\n\n*{calls} model calls, {usage.prompt_tokens} prompt tokens, "
        f"{usage.completion_tokens} completion tokens, cost {run_cost(events).text()}*"
    )
    return "\n\n".join(parts) + "\n"


def _block(event: Event, answerer: Answerer) -> str | None:
    """One event as a Markdown block, or None for events a reader does not need
    (``answerer`` names the person who answered in a channel)."""
    if isinstance(event, MessageEvent):
        return f"**{_plain(answerer.sender(event))} → {_plain(event.to)}**\n\n{event.content}"
    if isinstance(event, ToolCallEvent):
        arguments = json.dumps(event.arguments, ensure_ascii=False, indent=2)
        return f"*{_plain(event.agent)} calls `{event.name}`:*\n\n{_fenced(arguments, 'json')}"
    if isinstance(event, ToolResultEvent):
        said = "failed" if event.is_error else "answered"
        return f"*`{event.name}` {said}:*\n\n{_fenced(event.content)}"
    if isinstance(event, InterruptEvent):
        return f"*{_plain(event.to)} waits for {_plain(answerer.waited_for(event))}.*"
    if isinstance(event, ResumeEvent):
        said = f": {_plain(event.feedback)}" if event.feedback else " (no feedback)"
        if event.from_ in answerer.channels:
            return f"*{_plain(answerer.in_channel(event.from_))} answered {_plain(event.to)}{said}*"
        return f"*{_plain(event.from_)} answered{said}*"
    if isinstance(event, ErrorEvent):
        return f"*Error at {_plain(event.from_)} → {_plain(event.to)}: {_plain(event.content)}*"
    if isinstance(event, RetryEvent):
        return f"*Retried {_plain(event.from_)} → {_plain(event.to)}.*"
    if isinstance(event, BudgetEvent):
        from roost.budget_text import budget_words

        return f"*{_plain(budget_words(event))}.*"
    if isinstance(event, TerminateEvent):
        return f"*The run ended at {_plain(event.node)} ({_plain(event.reason or 'done')}).*"
    return None


def _plain(text: str) -> str:
    """``text`` on one line, with the characters Markdown would read as markup escaped."""
    return _MARKUP.sub(r"\\\1", " ".join(text.split()))


def _fenced(text: str, language: str = "") -> str:
    """``text`` in a code block whose fence is longer than any run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"
