"""What a batch of events changes in a run's cached summary (status, counts)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from roost.events import Event

# The status a run is in right after an event of each type; any other type: running.
# A run_start comes first, alone in its run only in a fork made at 1: a run not yet started.
_STATUS_AFTER = {
    "run_start": "new",
    "interrupt": "paused",
    "error": "error",
    "terminate": "terminated",
}


@dataclass(frozen=True, slots=True)
class Delta:
    status: str
    messages: int
    tokens: int


def summarize(events: Iterable[Event], status: str = "new") -> Delta:
    """The status after ``events`` and the messages and tokens they add."""
    messages = tokens = 0
    for event in events:
        status = _STATUS_AFTER.get(event.type, "running")
        if event.type == "message":
            messages += 1
        elif event.type == "llm_call" and event.usage:
            tokens += event.usage.get("prompt_tokens", 0) + event.usage.get("completion_tokens", 0)
    return Delta(status, messages, tokens)
