"""The stand-in for another engine's tool: it has only the recorded results, so it never runs."""

from __future__ import annotations

import pytest

from roost.importers.derive import STAND_IN
from roost.importers.recorded import not_recorded


def test_calling_a_recorded_tool_says_to_fork_with_a_real_one() -> None:
    assert STAND_IN == "roost.importers.recorded:not_recorded"
    with pytest.raises(RuntimeError) as refused:
        not_recorded(a=1)
    assert str(refused.value) == (
        "this tool was recorded by another engine: fork with --flow FILE naming a real tool"
    )
