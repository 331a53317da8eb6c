"""What every tool shares: how a raised exception reads in a tool's error result."""

from __future__ import annotations

from roost.tools.base import raised_text


def test_what_a_tool_raised_reads_as_its_type_and_message_or_its_exit() -> None:
    assert raised_text(ValueError("no such city")) == "ValueError: no such city"
    assert raised_text(KeyError()) == "KeyError"  # no message: the type alone, no colon
    assert raised_text(SystemExit(3)) == "sys.exit(3)"
    assert raised_text(SystemExit("bye")) == "sys.exit('bye')"
    assert raised_text(SystemExit()) == "sys.exit()"
