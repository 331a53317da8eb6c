"""A neutral history put in the order tool-calling APIs insist on, and whose reasoning goes back.

These call ``roost.providers._history`` directly; ``test_contract.py`` checks the same
order as each backend puts it on the wire.
"""

from __future__ import annotations

import pytest

from roost.errors import ProviderError
from roost.messages import (
    AssistantMessage,
    ReasoningPart,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from roost.providers._history import MISSING_RESULT, OwnReasoning, current_loop_start, paired

CALLS = (
    ToolCall(id="c1", name="add"),
    ToolCall(id="c2", name="add"),
    ToolCall(id="c3", name="mul"),
)


def result(call_id: str, content: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, name="add", content=content)


def test_results_follow_their_calls_in_call_order_and_a_missing_one_is_filled() -> None:
    asked = AssistantMessage(tool_calls=CALLS)
    history = (UserMessage(content="x"), asked, result("c2", "two"), result("c1", "one"))
    out = paired([*history, UserMessage(content="go on")], "llm")
    assert out[:4] == [history[0], asked, result("c1", "one"), result("c2", "two")]
    filled = out[4]
    assert isinstance(filled, ToolResultMessage)
    assert (filled.tool_call_id, filled.name, filled.is_error) == ("c3", "mul", True)
    assert filled.content == MISSING_RESULT
    assert out[5] == UserMessage(content="go on")


def test_a_result_answering_no_call_before_it_is_refused_naming_the_provider() -> None:
    history = (UserMessage(content="x"), result("zz", "1"))
    with pytest.raises(ProviderError, match="answers no tool call") as refused:
        paired(history, "mine")
    assert refused.value.provider == "mine"


def test_own_reasoning_keeps_only_the_parts_the_provider_made() -> None:
    own = ReasoningPart(kind="thinking", text="mine", provider_details={"provider": "mine"})
    other = ReasoningPart(kind="thinking", text="theirs", provider_details={"provider": "other"})
    unmarked = ReasoningPart(kind="thinking", text="unmarked")
    message = AssistantMessage(reasoning=(own, other, unmarked), provider="chain")
    assert OwnReasoning("mine").parts(message) == (own,)
    assert OwnReasoning("chain").parts(message) == (unmarked,)


def test_the_running_tool_loop_starts_after_the_last_user_message() -> None:
    loop = [AssistantMessage(tool_calls=CALLS[:1]), result("c1", "one")]
    assert current_loop_start([UserMessage(content="a"), *loop]) == 1
    assert current_loop_start([*loop, UserMessage(content="b")]) == 3
    assert current_loop_start(loop) == 0
