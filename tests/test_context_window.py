"""How big a node's view is, and what compaction's notes and trims leave of it."""

from __future__ import annotations

from roost.context_window import (
    CHARS_PER_TOKEN,
    CUT_NOTE,
    ENTRY_OVERHEAD,
    SUMMARY_HEAD,
    Calibration,
    ViewBase,
    thread_chars,
    trimmable,
)
from roost.messages import AssistantMessage, ReasoningPart, ToolCall, ToolResultMessage

THOUGHT = "Let me think this through step by step. " * 5


def test_a_view_that_covers_at_most_the_first_entry_has_no_placeholder() -> None:
    assert ViewBase(covered=0).placeholder() == ""
    assert ViewBase(covered=1).placeholder() == ""
    assert ViewBase(covered=1, summary="They met.").placeholder() == ""
    assert ViewBase(covered=3).placeholder() == CUT_NOTE.format(count=2)
    assert ViewBase(covered=3, summary="They met.").placeholder() == f"{SUMMARY_HEAD}\nThey met."


def test_a_compacted_view_counts_the_first_entry_the_placeholder_and_the_rest() -> None:
    sizes = [10, 30, 60, 100]  # running sums: the entries are 10, 20, 30 and 40 characters
    assert thread_chars(sizes, None) == 100
    assert thread_chars(sizes, ViewBase(covered=1)) == 100
    base = ViewBase(covered=3, summary="S")
    # The first entry (10) and the last (40) are shown; the second and third are summarised.
    assert thread_chars(sizes, base) == 10 + 40 + len(base.placeholder()) + ENTRY_OVERHEAD


def test_a_providers_characters_per_token_stay_within_bounds() -> None:
    assert Calibration(chars=100, tokens=10).ratio() == CHARS_PER_TOKEN  # too little reported
    assert Calibration(chars=3000, tokens=1000).ratio() == 3.0
    assert Calibration(chars=100_000, tokens=1000).ratio() == 12.0
    assert Calibration(chars=100, tokens=1000).ratio() == 1.0


def test_trimming_stops_before_the_latest_answer_and_the_results_it_waits_for() -> None:
    def answer(call_id: str) -> AssistantMessage:
        call = ToolCall(id=call_id, name="look", arguments={})
        thought = ReasoningPart(kind="reasoning_content", text=THOUGHT)
        return AssistantMessage(tool_calls=(call,), reasoning=(thought,))

    def result(call_id: str) -> ToolResultMessage:
        return ToolResultMessage(tool_call_id=call_id, name="look", content="y" * 5000)

    messages = [answer("c1"), result("c1"), answer("c2"), result("c2")]
    assert trimmable(messages, [1, 2, 3, 4]) == 2
    assert trimmable(messages[:2], [1, 2]) == -1  # one round: nothing before it to trim
