"""What a batch of events changes in a run's cached summary (status, counts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from roost.runstate import STATUS_AFTER, Status
from roost.store.checks import COLUMN_MAX, clamped_count

if TYPE_CHECKING:
    from collections.abc import Iterable

    from roost.events import Event


@dataclass(frozen=True, slots=True)
class Delta:
    status: Status | None  # None: the events leave the run's status as it was
    messages: int
    tokens: int
    clamped: bool = False  # some usage figure did not fit the tokens column


def summarize(events: Iterable[Event], status: Status | None = None) -> Delta:
    """The status after ``events`` and the messages and tokens they add.

    The status moves as the run's fold moves it (``roost.runstate.STATUS_AFTER``);
    it stays ``status`` (None: as the run's row has it) when no event changes it.

    Tokens count up to COLUMN_MAX: a usage figure outside 0..COLUMN_MAX (a provider
    reporting 10**20, or less than nothing) is counted as the nearest end of that
    range, and ``clamped`` says so. The events keep the figures as reported.
    """
    messages = tokens = 0
    clamped = False
    for event in events:
        status = STATUS_AFTER.get(event.type, status)
        if event.type == "message":
            messages += 1
        elif event.type == "llm_call" and event.usage:
            prompt, completion = event.usage.prompt_tokens, event.usage.completion_tokens
            if prompt >= 0 and completion >= 0 and tokens + prompt + completion <= COLUMN_MAX:
                tokens += prompt + completion  # the common case: every figure fits
                continue
            for key in ("prompt_tokens", "completion_tokens"):
                reported = getattr(event.usage, key)
                counted = clamped_count(reported)
                clamped = clamped or counted != reported
                clamped = clamped or tokens + counted > COLUMN_MAX
                tokens = clamped_count(tokens + counted)
    return Delta(status, messages, tokens, clamped)
