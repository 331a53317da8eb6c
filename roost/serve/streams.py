"""What a stream of a run sends: its events in order, the text of answers as they come, its state.

The same items go out over Server-Sent Events and over a WebSocket:

- ``{"type": "event", "event": {...}}``: each event once, in seq order, from
  the first after ``after``; a stream that falls behind, or a run another
  worker steps, is caught up from the store, so none is ever skipped;
- ``{"type": "delta", "node": ..., "text": ...}``: a piece of a model's answer
  as it streams (from this worker's steps only), before its ``message`` event;
- ``{"type": "state", ...}``: where the run stands, at the start and each time
  a step ends (the body of ``GET /runs/{id}``);
- ``{"type": "notice", "message": ...}``: a message that was not delivered, or
  a step that could not be taken.

The stream ends once a terminated run has nothing more to show.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from roost.events import Event, event_dict
from roost.serve.hub import Hub, Watcher


async def follow(hub: Hub, run_id: str, after: int) -> AsyncIterator[dict[str, Any]]:
    """The items of a run's stream, from the events after seq ``after`` on."""
    watcher = hub.watch(run_id)
    last = after
    try:
        for event in hub.events_after(run_id, last):
            last = event.seq
            yield _event(event)
        summary = hub.summary(run_id)
        yield {"type": "state", **summary}
        if _over(summary):
            return
        while True:
            try:
                item = await asyncio.wait_for(watcher.queue.get(), hub.config.poll_seconds)
            except TimeoutError:
                item = None
            if item is None or watcher.behind:
                watcher.behind = False
                caught_up = last
                for event in hub.events_after(run_id, last):
                    last = event.seq
                    yield _event(event)
                if item is None:
                    if last == caught_up:
                        continue
                    item = {"type": "state"}  # another worker's step: say where it stands
            kind = item["type"]
            if kind == "event":
                event = item["event"]
                if event.seq <= last:
                    continue  # read from the store already
                if event.seq > last + 1:  # a gap: what came between is in the store
                    for missed in hub.events_after(run_id, last):
                        last = missed.seq
                        yield _event(missed)
                    continue
                last = event.seq
                yield _event(event)
            elif kind == "state":
                summary = hub.summary(run_id)
                yield {"type": "state", **summary}
                if _over(summary):
                    for left in _left(watcher):
                        yield left
                    return
            else:
                yield item
    finally:
        hub.unwatch(run_id, watcher)


def _left(watcher: Watcher) -> list[dict[str, Any]]:
    """The notices a stream's queue still holds when its run ends (a message dropped
    as the run ended is told before the stream closes)."""
    left: list[dict[str, Any]] = []
    while not watcher.queue.empty():
        item = watcher.queue.get_nowait()
        if item["type"] == "notice":
            left.append(item)
    return left


def _over(summary: dict[str, Any]) -> bool:
    """Whether a run has nothing more to show: terminated, no step running, nothing
    queued (a message that came too late is dropped with a notice first)."""
    return summary["status"] == "terminated" and not summary["busy"] and not summary["queued"]


def _event(event: Event) -> dict[str, Any]:
    return {"type": "event", "event": event_dict(event)}
