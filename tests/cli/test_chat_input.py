"""What the person types in ``roost chat``: lines in order, /stop seen while a step runs, no
line read before the chat wants one."""

from __future__ import annotations

import io
import threading
import time

from roost.cli.chat_input import TypedLines


class CountedLines(io.StringIO):
    """A stream that counts the lines taken from it."""

    taken = 0

    def readline(self, size: int | None = -1) -> str:
        self.taken += 1
        return super().readline(size)


class HeldLines(CountedLines):
    """Counted lines that wait until ``typed`` is set, as a terminal waits for a person."""

    def __init__(self, text: str, typed: threading.Event) -> None:
        super().__init__(text)
        self.typed = typed

    def readline(self, size: int | None = -1) -> str:
        assert self.typed.wait(10)
        return super().readline(size)


def test_lines_come_in_order_without_their_line_ends_then_none_for_good() -> None:
    lines = TypedLines(io.StringIO("hello\r\nbye\n"))
    assert [lines.next(), lines.next(), lines.next(), lines.next()] == ["hello", "bye", None, None]


def test_stop_typed_during_a_step_is_seen_and_the_other_lines_wait_their_turn() -> None:
    lines = TypedLines(io.StringIO("one\n/stop\ntwo\n"))
    deadline = time.monotonic() + 10
    while not lines.stop_typed():
        assert time.monotonic() < deadline, "/stop was never seen"
        time.sleep(0.01)
    assert [lines.next(), lines.next(), lines.next()] == ["one", "two", None]


def test_a_line_is_taken_from_the_input_only_when_the_chat_wants_one() -> None:
    typed = threading.Event()
    stream = HeldLines("a\n/quit\nnot for roost\n", typed)
    lines = TypedLines(stream)
    for _ in range(5):  # a step looking for /stop, again and again, before anything is typed
        assert not lines.stop_typed()
    typed.set()
    assert (lines.next(), lines.next()) == ("a", "/quit")
    time.sleep(0.1)  # a read ahead, were there one, would have happened by now
    assert stream.taken == 2
