"""What a batch of events changes in a run's cached summary (status, counts)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from roost.events import Event
from roost.store.checks import COLUMN_MAX, clamped_count

# The status a run is in right after an event of each type; any other type: running.
_STATUS_AFTER = {"interrupt": "paused", "error": "error", "terminate": "terminated"}


@dataclass(frozen=True, slots=True)
class Delta:
    status: str
    messages: int
    tokens: int
    clamped: bool = False  # some usage figure did not fit the tokens column


def summarize(events: Iterable[Event], status: str = "new") -> Delta:
    """The status after ``events`` and the messages and tokens they add.

    Tokens count up to COLUMN_MAX: a usage figure outside 0..COLUMN_MAX (a provider
    reporting 10**20, or less than nothing) is counted as the nearest end of that
    range, and ``clamped`` says so. The events keep the figures as reported.
    """
    messages = tokens = 0
    clamped = False
    for event in events:
        if event.type != "flow":  # a change of flow leaves the run where it stands
            status = _STATUS_AFTER.get(event.type, "running")
        if event.type == "message":
            messages += 1
        elif event.type == "llm_call" and event.usage:
            for key in ("prompt_tokens", "completion_tokens"):
                reported = event.usage.get(key, 0)
                counted = clamped_count(reported)
                clamped = clamped or counted != reported
                clamped = clamped or tokens + counted > COLUMN_MAX
                tokens = clamped_count(tokens + counted)
    return Delta(status, messages, tokens, clamped)
