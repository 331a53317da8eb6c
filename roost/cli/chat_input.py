"""What the person types in ``roost chat``, read in a thread of its own.

The chat waits for a line at its prompt, and while a step runs it looks at
what was typed meanwhile, so that ``/stop`` stops a model in the middle of its
answer. Lines typed during a step that are not ``/stop`` wait their turn and
are used, in order, as if typed at the next prompts.

A line is read only when the chat wants one: one read at a time is under way,
so nothing after the line that ends the chat (``/quit``) is taken from the
input. The main thread waits in short slices, so Ctrl-C reaches it at once
whichever thread the terminal's signal lands on.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from typing import TextIO

STOP = "/stop"
_SLICE = 0.2  # seconds the main thread waits at a time for a line


class TypedLines:
    """The lines of ``stream``, as the person types them."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._read: queue.Queue[str | None] = queue.Queue()  # None: the input has ended
        self._waiting: deque[str | None] = deque()  # typed during a step, not used yet
        self._reading = False  # a read is under way in the reader's thread
        self._ended = False

    def next(self) -> str | None:
        """The next line, waiting for it; None once the input has ended."""
        if self._waiting:
            return self._waiting.popleft()
        if self._ended:
            return None
        self._want()
        while True:
            try:
                line = self._read.get(timeout=_SLICE)
            except queue.Empty:
                continue
            return self._got(line)

    def stop_typed(self) -> bool:
        """Whether ``/stop`` was typed since the last look, without waiting; the other lines
        typed meanwhile are kept for the next prompts, and the reading goes on."""
        stop = False
        while not self._ended:
            self._want()
            try:
                line = self._got(self._read.get_nowait())
            except queue.Empty:
                break
            if line is not None and line.strip() == STOP:
                stop = True
            else:
                self._waiting.append(line)
        return stop

    def _got(self, line: str | None) -> str | None:
        self._reading = False
        self._ended = line is None
        return line

    def _want(self) -> None:
        """Starts reading the next line unless a read is under way or the input has ended."""
        if self._reading or self._ended:
            return
        self._reading = True
        threading.Thread(target=self._read_one, name="roost-chat-input", daemon=True).start()

    def _read_one(self) -> None:
        try:
            raw = self._stream.readline()
        except (OSError, ValueError):  # closed under it, or bytes that are no text: it ends
            raw = ""
        self._read.put(raw.removesuffix("\n").removesuffix("\r") if raw else None)
