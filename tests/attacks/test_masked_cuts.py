"""A text the tool loop shortens is masked first: no cut leaves a secret's first characters.

The model may know a secret (one it was told some other way: templates may
not read secrets) and write it back in a tool call's arguments; the loop quotes
arguments that are not JSON, and shows a long tool result cut to
``tool_result_limit``. A secret straddling either cut must show as ``***``,
not as the few characters before the cut, too short to be recognised as it.
Through the engine both texts come from recorded events, masked already (the
first two tests held before the loop masked on its own); the last one checks
that the loop masks before it cuts whatever text it is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.engine import Runner
from roost.engine.sources import Sources
from roost.flow import load_flow_text
from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
)
from roost.ports import MemoryLog
from roost.tools.base import Tool, ToolOutcome

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.providers.base import TextCallback

SECRET = "sk-live-4242-very-secret"
HEAD = SECRET[:5]  # what a cut 5 characters into the secret would leave: "sk-li"

FLOW = """
roost: 1
name: cuts
defaults: {provider: model, tool_result_limit: 100}
providers:
  model: {kind: scripted, api_key: "${TOKEN}"}
tools:
  echo: {python: "never_imported:echo"}  # the test gives the tool itself
agents:
  USER: {role: u, interrupt: ALWAYS}
  bot: {role: "You hold a token.", functions: [echo]}
start: {from: USER, to: bot, content: go}
"""


class EchoTool:
    """Gives back a result whose secret straddles the flow's tool_result_limit (100)."""

    spec = ToolSpec(name="echo", description="echoes")
    direct_output = False
    approval = False
    timeout = 5.0

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome("y" * 95 + SECRET + " and more")


class CallingModel:
    """First asks for ``echo`` with arguments that are not JSON, then for ``echo`` properly."""

    name = "model"
    model = "calling"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        self.requests.append(request)
        if len(self.requests) == 1:
            # The secret starts 195 characters in: a cut at 200 keeps its first five.
            raw = "x" * 195 + SECRET
            bad = ToolCall(id="c1", name="echo", raw_arguments=raw)
            return ModelResponse(message=AssistantMessage(tool_calls=(bad,)))
        if len(self.requests) == 2:
            good = ToolCall(id="c2", name="echo", arguments={})
            return ModelResponse(message=AssistantMessage(tool_calls=(good,)))
        return ModelResponse(message=AssistantMessage(content="done"))


def tools_for(agent: str, text: str) -> Sequence[Tool]:
    return [EchoTool()]


async def run() -> tuple[MemoryLog, CallingModel]:
    flow = load_flow_text(FLOW, "cuts.yaml", environ={"TOKEN": SECRET})
    model = CallingModel()
    log = MemoryLog("r")
    await Runner(
        flow=flow, log=log, sources=Sources(providers=lambda name: model, tools=tools_for)
    ).start()
    return log, model


def results_sent(model: CallingModel) -> list[str]:
    last = model.requests[-1]
    return [m.content for m in last.messages if isinstance(m, ToolResultMessage)]


async def test_arguments_that_are_not_json_are_masked_before_they_are_cut() -> None:
    log, model = await run()
    first = next(e for e in log.load() if e.type == "tool_result")
    assert first.content == "the arguments of echo are not valid JSON: " + "x" * 195 + "***"
    dumped = "\n".join(event.model_dump_json() for event in log.load())
    assert HEAD not in dumped and HEAD not in results_sent(model)[0]


async def test_a_long_tool_result_is_masked_before_it_is_cut() -> None:
    _, model = await run()
    second = results_sent(model)[1]
    assert second.startswith("y" * 95 + "***")
    assert "[cut: the first 100 of" in second
    assert HEAD not in second


def test_the_loop_masks_before_it_cuts_whatever_text_it_is_given() -> None:
    # Through the engine the loop reads results the recorder masked already (the
    # tests above); the loop does not count on it: a text masked nowhere else is
    # masked before the cut all the same.
    from roost.engine.tool_loop import ToolLoop
    from roost.flow.redact import Redactor
    from roost.runstate import Turn

    loop = ToolLoop(recorder=None, compactor=None, redact=Redactor([SECRET]))  # type: ignore[arg-type]
    turn = Turn(messages=[ToolResultMessage(tool_call_id="c", name="t", content="y" * 95 + SECRET)])
    (shown,) = loop._tail(turn, 100)
    assert isinstance(shown, ToolResultMessage)
    assert shown.content.startswith("y" * 95 + "***\n[cut: the first 100 of 119")
