"""What one server process sends its streams: each run's watchers, and an event encoded once."""

from __future__ import annotations

import json

import pytest

from roost.events import MessageEvent
from roost.serve._broadcast import WATCH_BACKLOG, Broadcast
from roost.serve.errors import TooManyStreams


def message(seq: int, run: str = "r") -> MessageEvent:
    return MessageEvent(seq=seq, run=run, ts="t", from_="a", to="b", content="one\ntwo")


def test_a_client_opens_as_many_streams_as_the_limit_and_a_closed_one_frees_its_place() -> None:
    broadcast = Broadcast(streams_per_client=2)
    broadcast.open_stream("10.0.0.1")
    broadcast.open_stream("10.0.0.1")
    broadcast.open_stream("10.0.0.2")  # another client counts on its own
    with pytest.raises(TooManyStreams, match=r"10\.0\.0\.1 has 2 streams open"):
        broadcast.open_stream("10.0.0.1")
    assert broadcast.streams_open() == 3
    broadcast.close_stream("10.0.0.1")
    broadcast.open_stream("10.0.0.1")
    for _ in range(3):
        broadcast.close_stream("10.0.0.1")
    broadcast.close_stream("10.0.0.2")
    assert broadcast.streams_open() == 0


def test_an_item_goes_to_every_watcher_of_its_run_and_no_other() -> None:
    broadcast = Broadcast(streams_per_client=8)
    first, second, elsewhere = broadcast.watch("r"), broadcast.watch("r"), broadcast.watch("s")
    broadcast.publish("r", {"type": "delta", "text": "Hel"})
    assert first.queue.get_nowait() == second.queue.get_nowait() == {"type": "delta", "text": "Hel"}
    assert elsewhere.queue.empty()
    broadcast.unwatch("r", first)
    broadcast.publish("r", {"type": "delta", "text": "lo"})
    assert first.queue.empty() and second.queue.qsize() == 1


def test_a_watcher_that_falls_too_far_behind_is_marked_to_read_the_store() -> None:
    broadcast = Broadcast(streams_per_client=8)
    slow = broadcast.watch("r")
    for n in range(WATCH_BACKLOG):
        broadcast.publish("r", {"n": n})
    assert not slow.behind
    broadcast.publish("r", {"n": WATCH_BACKLOG})
    assert slow.behind and slow.queue.qsize() == WATCH_BACKLOG


def test_an_event_is_encoded_once_as_json_and_as_one_server_sent_events_frame() -> None:
    broadcast = Broadcast(streams_per_client=8)
    text, frame = broadcast.encoded(message(4))
    assert json.loads(text)["type"] == "event"
    assert json.loads(text)["event"]["content"] == "one\ntwo"
    assert frame == f"id: 4\r\nevent: event\r\ndata: {text}\r\n\r\n".encode()
    assert broadcast.encoded(message(4)) is broadcast.encoded(message(4))
