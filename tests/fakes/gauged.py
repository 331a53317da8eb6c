"""A fake LLM server that takes its time and measures how many requests it holds at once.

Each request waits ``delay`` seconds before it is answered (as the plain fake
answers it), so a test can stop a server in the middle of a model call, or
see how many calls a client let through at the same time (``peak``).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from fakes.llm_server import FakeLLMServer, Received

if TYPE_CHECKING:
    from fakes.script import Action


class GaugedLLMServer(FakeLLMServer):
    """``FakeLLMServer`` whose answers take ``delay`` seconds; ``peak`` requests held at once."""

    def __init__(self, *, delay: float = 0.2, **options: Any) -> None:
        super().__init__(**options)
        self.delay = delay
        self.in_flight = 0
        self.peak = 0
        self.started: list[float] = []  # when each request came (monotonic seconds)
        self._gauge = threading.Lock()

    def _take(self, received: Received) -> Action:
        with self._gauge:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.started.append(time.monotonic())
        try:
            time.sleep(self.delay)
            return super()._take(received)
        finally:
            with self._gauge:
                self.in_flight -= 1
