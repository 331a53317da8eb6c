"""What a child run is made of: its id, the parent's call it answers, its outcome."""

from __future__ import annotations

import re

from roost.engine.subflow import new_child_id, open_call, outcome_of
from roost.events import ErrorEvent, InterruptEvent, MessageEvent, ToolCallEvent, ToolResultEvent


def call(seq: int, call_id: str, arguments: dict[str, str]) -> ToolCallEvent:
    return ToolCallEvent(
        seq=seq, run="p", ts="", agent="boss", id=call_id, name="parrot", arguments=arguments
    )


def message(seq: int, frm: str, to: str, content: str) -> MessageEvent:
    return MessageEvent(seq=seq, run="c", ts="", from_=frm, to=to, content=content)


def test_a_child_id_is_in_the_stores_style_and_new_each_time() -> None:
    first, second = new_child_id(), new_child_id()
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", first) and first != second


def test_parallel_calls_alike_are_each_claimed_once_latest_first_and_answered_ones_never() -> None:
    same = {"message": "hi"}
    answered = ToolResultEvent(
        seq=3, run="p", ts="", agent="boss", id="c1", name="parrot", content=""
    )
    parent = [call(0, "c1", same), call(1, "c2", same), call(2, "c3", same), answered]
    claimed: set[str] = set()
    assert open_call(parent, "parrot", same, claimed) == "c3"
    assert open_call(parent, "parrot", same, claimed) == "c2"
    assert open_call(parent, "parrot", same, claimed) is None  # c1 has its result
    assert open_call(parent, "parrot", {"message": "other"}, set()) is None
    assert open_call(parent, "writer", same, set()) is None
    assert claimed == {"c2", "c3"}


def test_the_outcome_is_the_childs_last_message_or_its_error() -> None:
    start = message(0, "USER", "parrot", "hi")
    done = [start, message(1, "parrot", "USER", "hello back")]
    outcome = outcome_of(done, "echo", "c1")
    assert (outcome.content, outcome.is_error, outcome.child_run) == ("hello back", False, "c1")
    failed = [start, ErrorEvent(seq=1, run="c", ts="", from_="parrot", to="USER", content="down")]
    outcome = outcome_of(failed, "echo", "c1")
    assert outcome.is_error and outcome.content == "sub-flow 'echo' failed: down"


def test_a_child_waiting_for_a_tools_approval_says_which_and_where() -> None:
    waiting = InterruptEvent(
        seq=1,
        run="c",
        ts="",
        from_="parrot",
        to="USER",
        reason="tool_approval",
        tool_call={"name": "shell", "arguments": {}},
    )
    outcome = outcome_of([message(0, "USER", "parrot", "hi"), waiting], "echo", "c1")
    assert outcome.is_error
    assert outcome.content == "sub-flow 'echo' is waiting for approval of its tool 'shell' (run c1)"
