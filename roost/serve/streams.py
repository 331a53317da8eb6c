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

Many streams on one run cost about what one does: an event is encoded to JSON
once for all of them (``Broadcast.encoded``), a catch-up is read from the store in
pages, off the event loop, and streams catching up from the same point share
each read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from roost.events import Event
from roost.serve._broadcast import Watcher
from roost.serve.hub import Hub

PAGE = 500  # events per read of a catch-up: a long run is sent a page at a time


@dataclass(frozen=True, slots=True)
class Sent:
    """One item of a stream, encoded: its type, an event's seq, its JSON text, and for an
    event its Server-Sent Events frame (shared by every stream that sends it)."""

    type: str
    seq: int | None
    text: str
    frame: bytes | None = None


def sse_frames(batch: list[Sent]) -> bytes:
    """A batch of items as Server-Sent Events, in one write."""
    return b"".join(
        item.frame
        if item.frame is not None
        else f"event: {item.type}\r\ndata: {item.text}\r\n\r\n".encode()
        for item in batch
    )


async def follow(hub: Hub, run_id: str, after: int) -> AsyncIterator[list[Sent]]:
    """The items of a run's stream, from the events after seq ``after`` on, in batches
    (a page of stored events is one batch, written at once)."""
    watcher = hub.broadcast.watch(run_id)
    last = after
    try:
        async for page in _catch_up(hub, run_id, last):
            last = page[-1].seq
            yield [_event(hub, event) for event in page]
        summary = await asyncio.to_thread(hub.summary, run_id)
        yield [_item({"type": "state", **summary})]
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
                async for page in _catch_up(hub, run_id, last):
                    last = page[-1].seq
                    yield [_event(hub, event) for event in page]
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
                    async for page in _catch_up(hub, run_id, last):
                        last = page[-1].seq
                        yield [_event(hub, missed) for missed in page]
                    continue
                last = event.seq
                yield [_event(hub, event)]
            elif kind == "state":
                summary = await asyncio.to_thread(hub.summary, run_id)
                yield [_item({"type": "state", **summary})]
                if _over(summary):
                    yield [_item(left) for left in _left(watcher)]
                    return
            else:
                yield [_item(item)]
    finally:
        hub.broadcast.unwatch(run_id, watcher)


async def _catch_up(hub: Hub, run_id: str, after: int) -> AsyncIterator[list[Event]]:
    """The stored events after ``after``, a page at a time, until none is left."""
    while True:
        page = await hub.reads.events_after(run_id, after, PAGE)
        if page:
            yield page
        if len(page) < PAGE:
            return
        after = page[-1].seq


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


def _event(hub: Hub, event: Event) -> Sent:
    text, frame = hub.broadcast.encoded(event)
    return Sent("event", event.seq, text, frame)


def _item(item: dict[str, Any]) -> Sent:
    return Sent(item["type"], None, json.dumps(item, ensure_ascii=False))
