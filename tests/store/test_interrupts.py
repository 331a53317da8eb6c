"""Ctrl-C held while a batch is written to several logs: raised at once between batches."""

from __future__ import annotations

import pytest

from roost.ports import MemoryLog
from roost.store.interrupts import interrupt_now_or_after_the_batch
from roost.store.tee import TeeLog
from tests.store.conftest import run_events


def test_an_interrupt_between_batches_is_raised_at_once() -> None:
    with pytest.raises(KeyboardInterrupt):
        interrupt_now_or_after_the_batch()
    log = TeeLog(MemoryLog("r"), [MemoryLog("r")])
    log.append(run_events("r", 2))  # nothing held over from before
    assert len(log.copies[0].load()) == 2
