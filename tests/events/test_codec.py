"""Events are read from and written to JSON: an old log loads and is written back as it was."""

from __future__ import annotations

import pytest

from roost.events import event_json, parse_event
from tests.events.conftest import LOGS, lines


@pytest.mark.parametrize("name", LOGS)
def test_an_old_log_loads_and_is_written_back_byte_for_byte(name: str) -> None:
    for line in lines(name):
        assert event_json(parse_event(line)) == line
