"""The decisions a replay reads from the record: each hook's, each ``python`` route's; routes
that read only the reply are judged again."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from roost.engine.recorded.decisions import RecordedHooks, RecordedRoutes
from roost.errors import RoostError
from roost.events import HookEvent, MessageEvent, RouteRecord, SelectEvent
from roost.flow.models import Flow, Route
from roost.runstate import RunState
from tests.engine.conftest import make_flow

HOOKED = """
roost: 1
name: hooked
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [a]}
hooks:
  before_tool: [{python: "guards:no_rm"}]
agents:
  USER: {role: u}
  bot: {role: b}
start: {from: USER, to: bot, content: hi}
"""


@dataclass
class Position:
    flow: Flow
    state: RunState = field(default_factory=RunState)

    def cancel(self) -> bool:
        return False


def route(to: str, when: dict[str, str]) -> Route:
    return Route.model_validate({"to": to, "when": when})


def test_a_python_route_holds_as_recorded_and_the_others_are_judged_again() -> None:
    held = (RouteRecord(to="critic", when="python", held=True),)
    held += (RouteRecord(to="TERMINATE", when="python", held=False),)
    recorded = [
        MessageEvent(seq=1, run="r", ts="", from_="USER", to="team", content="go"),
        MessageEvent(seq=2, run="r", ts="", from_="writer", to="team", content="draft"),
        SelectEvent(
            seq=3,
            run="r",
            ts="",
            channel="team",
            candidates=("critic",),
            chosen="critic",
            by="round_robin",
            routes=held,
        ),
    ]
    routes = RecordedRoutes(recorded)
    wants = route("critic", {"python": "checks:wants"})
    assert routes(2, 0, wants, "draft", None) is True
    assert routes(2, 1, wants, "draft", None) is False
    assert routes(2, 2, wants, "draft", None) is False  # no such route was recorded
    assert routes(1, 0, wants, "go", None) is False  # no decision was made on seq 1
    says = route("critic", {"contains": "again"})
    assert routes(2, 0, says, "write it again", None) is True
    assert routes(2, 0, says, "draft", None) is False


async def test_a_hook_decides_as_recorded_and_without_a_record_refuses() -> None:
    decided = HookEvent(
        seq=4,
        run="r",
        ts="",
        node="bot",
        stage="before_tool",
        hook="guards:no_rm",
        decision="refuse",
        tool_call="c1",
        reason="no rm here",
    )
    hooks = RecordedHooks([decided])
    with pytest.raises(RoostError, match="bind them to it first"):
        hooks("bot", "before_tool")
    hooks.bind(Position(make_flow(HOOKED)))  # type: ignore[arg-type]
    assert hooks("bot", "after_tool") == ()
    [hook] = hooks("bot", "before_tool")
    assert hook.name == "guards:no_rm"
    first = await hook.decide("before_tool", {"id": "c1", "name": "shell"})
    assert (first.decision, first.reason) == ("refuse", "no rm here")
    again = await hook.decide("before_tool", {"id": "c1", "name": "shell"})
    assert again.decision == "refuse"
    assert again.reason == "replay: no recorded decision of hook guards:no_rm"
