"""A run's log and its --events copy: a Ctrl-C never lands between their writes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.ports import MemoryLog
from roost.store.interrupts import interrupt_now_or_after_the_batch
from roost.store.tee import TeeLog
from tests.store.conftest import run_events

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.events import Event


class InterruptedWhileWriting(MemoryLog):
    """A primary log during whose write Ctrl-C arrives (the handler is called as Python would)."""

    def append(self, events: Sequence[Event]) -> None:
        super().append(events)
        interrupt_now_or_after_the_batch()


def test_an_interrupt_during_a_batch_is_raised_once_every_log_has_it() -> None:
    primary, copy = InterruptedWhileWriting("r"), MemoryLog("r")
    events = run_events("r", 3)
    with pytest.raises(KeyboardInterrupt):
        TeeLog(primary, [copy]).append(events)
    assert copy.load() == primary.load() == events
