"""What the streams of one server process are sent: each run's watchers, and events encoded once.

Every event a run records here and the text of its model answers go to the
``Watcher`` of each stream open on that run (``publish``); a slow stream whose
queue fills is marked behind and reads the store instead. An event's stream
item is encoded once for all the streams that send it. The streams open per
client address are counted against the server's limit.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from roost.events import Event, event_dict
from roost.serve.errors import TooManyStreams

ENCODED_KEPT = 5_000  # events whose stream JSON is kept for the next stream that sends them
WATCH_BACKLOG = 2000  # items a slow stream may fall behind before it reads the store instead


@dataclass(eq=False)  # each stream its own: kept in a set by identity
class Watcher:
    """One stream's view of a run: what happened since it last looked."""

    queue: asyncio.Queue[dict[str, Any]] = field(
        default_factory=lambda: asyncio.Queue(WATCH_BACKLOG)
    )
    behind: bool = False  # items were dropped: the stream reads the events from the store

    def put(self, item: dict[str, Any]) -> None:
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            self.behind = True


class Broadcast:
    """The watchers of each run, the streams open per client, and the encoded events."""

    def __init__(self, streams_per_client: int) -> None:
        self.streams_per_client = streams_per_client
        self._watchers: dict[str, set[Watcher]] = {}
        self._streams: dict[str, int] = {}  # streams open per client address
        self._encoded: OrderedDict[tuple[str, int], tuple[str, bytes]] = OrderedDict()

    def encoded(self, event: Event) -> tuple[str, bytes]:
        """An event's stream item as JSON, and as a Server-Sent Events frame: encoded once
        for every stream that sends it."""
        key = (event.run, event.seq)
        found = self._encoded.get(key)
        if found is None:
            text = json.dumps({"type": "event", "event": event_dict(event)}, ensure_ascii=False)
            # JSON escapes line breaks: the text is one data line.
            frame = f"id: {event.seq}\r\nevent: event\r\ndata: {text}\r\n\r\n".encode()
            found = self._encoded[key] = (text, frame)
            if len(self._encoded) > ENCODED_KEPT:
                self._encoded.popitem(last=False)
        else:
            self._encoded.move_to_end(key)
        return found

    def open_stream(self, client: str) -> None:
        """Counts a stream of ``client`` (its address); TooManyStreams past the limit."""
        open_ = self._streams.get(client, 0)
        if open_ >= self.streams_per_client:
            raise TooManyStreams(
                f"{client} has {open_} streams open, as many as one client may; "
                "close one before opening another"
            )
        self._streams[client] = open_ + 1

    def streams_open(self) -> int:
        return sum(self._streams.values())

    def close_stream(self, client: str) -> None:
        left = self._streams.get(client, 1) - 1
        if left > 0:
            self._streams[client] = left
        else:
            self._streams.pop(client, None)

    def watch(self, run_id: str) -> Watcher:
        watcher = Watcher()
        self._watchers.setdefault(run_id, set()).add(watcher)
        return watcher

    def unwatch(self, run_id: str, watcher: Watcher) -> None:
        watchers = self._watchers.get(run_id)
        if watchers is not None:
            watchers.discard(watcher)
            if not watchers:
                del self._watchers[run_id]

    def publish(self, run_id: str, item: dict[str, Any]) -> None:
        for watcher in self._watchers.get(run_id, ()):
            watcher.put(item)
