"""What a step left undone when its process stopped, read from the end of the log.

A step's events reach the log together, but a process can die, or a log be
torn or forked, between two of them. The run is then ``running`` and
``retry()`` must do what the last recorded event called for, no more and no
less: the checks after a reply, the pause after a human was chosen, the
person's answer after a ``resume``, or the model answer already recorded
(used as it is rather than asked for again). ``retry`` events that did not
get further are skipped: what they were redoing is still to do; so are
``flow`` events, which change the flow the redo follows, not what it redoes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from roost.events import Event, LlmCallEvent

if TYPE_CHECKING:
    from collections.abc import Sequence

# Events that do no part of a step: a retry that did not get further, a change of flow.
_PASSED_OVER = frozenset({"retry", "flow"})


@dataclass(frozen=True, slots=True)
class Unfinished:
    """The end of a stopped run's log, as much of it as deciding the redo needs."""

    last: Event | None = None  # the latest event other than a retry
    before: Event | None = None  # the one before it, likewise
    answers: list[LlmCallEvent] = field(default_factory=list)  # text answers not yet used


def unfinished(events: Sequence[Event]) -> Unfinished:
    """The latest events of ``events`` (retries skipped) and its unused model answers."""
    recent: list[Event] = []
    trailing: list[LlmCallEvent] = []
    for event in reversed(events):
        if event.type in _PASSED_OVER:
            continue
        if isinstance(event, LlmCallEvent) and len(recent) == len(trailing):
            trailing.append(event)
        recent.append(event)
        if len(recent) >= 2 and len(recent) > len(trailing):
            break
    trailing.reverse()
    return Unfinished(
        last=recent[0] if recent else None,
        before=recent[1] if len(recent) > 1 else None,
        answers=[call for call in trailing if _usable(call)],
    )


def _usable(call: LlmCallEvent) -> bool:
    """A recorded answer a redo can use: it succeeded and asked for no tool.

    An answer with tool calls is already part of the reply in progress (its
    calls are run from the state); a failed call is simply made again.
    """
    if call.error is not None or call.response is None:
        return False
    return not call.response.tool_calls
