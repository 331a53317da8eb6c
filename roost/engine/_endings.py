"""How a run stops moving: at an error, paused for a person, or terminated.

A pause or an end is put off while the run's background tasks are open
(``held``): their results are delivered first, and the run goes on from them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.events import ErrorEvent, InterruptEvent, RouteRecord, TerminateEvent

if TYPE_CHECKING:
    from roost.engine.background import BackgroundSource
    from roost.engine.recorder import Recorder
    from roost.flow.redact import Redactor

# The chat step to take next: (who speaks, to whom); None when the run stopped moving.
Step = tuple[str, str] | None


class Endings:
    """Records a run's error, pause or end, each written to the log at once."""

    def __init__(
        self, recorder: Recorder, redact: Redactor, background: BackgroundSource | None
    ) -> None:
        self.rec = recorder
        self.state = recorder.state
        self.redact = redact
        self.background = background
        # A pause or an end put off because background tasks are open: their results come first.
        self.held = False

    def fail(self, frm: str, to: str, message: str) -> None:
        self.rec.add(ErrorEvent, from_=frm, to=to, content=self.redact(message))
        self.rec.flush()

    def pause(self, frm: str, to: str) -> None:
        if self.holds():
            return
        self.rec.add(InterruptEvent, from_=frm, to=to, reason="human")
        self.rec.flush()

    def terminate(
        self, node: str, reason: str, routes: tuple[RouteRecord, ...] | None = None
    ) -> None:
        if self.holds():
            return
        self.rec.add(TerminateEvent, node=node, reason=reason, routes=routes)
        self.rec.flush()

    def holds(self) -> bool:
        """Whether the run, about to pause or end, waits for background tasks first."""
        if not self.state.background or self.background is None:
            return False
        self.held = True
        return True
