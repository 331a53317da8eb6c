"""The providers and tools a Runner uses when its caller names none."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.engine.child_runs import ChildRuns
from roost.engine.defaults import default_provider, default_toolbox
from roost.engine.runner import Runner
from roost.errors import RoostError
from roost.messages import ModelRequest, UserMessage
from roost.providers.fallback import FallbackProvider
from roost.runstate import RunState
from tests.engine.conftest import SHOUT, make_flow

if TYPE_CHECKING:
    from pathlib import Path

FLOW = """
roost: 1
name: defaults
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [one, two, three], fallback: [spare]}
  spare: {kind: scripted, replies: [spare]}
tools:
  shout: {python: "loud:shout"}
agents:
  USER: {role: u}
  bot: {role: b, functions: [shout]}
start: {from: USER, to: bot, content: hi}
"""
ASK = ModelRequest(messages=(UserMessage(content="x"),))


async def test_a_provider_starts_where_the_runs_log_leaves_it() -> None:
    state = RunState()
    state.provider_attempts["mock"] = 2
    provider = default_provider(make_flow(FLOW), state, "mock")
    assert isinstance(provider, FallbackProvider)  # built with its fallbacks
    assert (await provider.complete(ASK)).message.content == "three"


def test_a_provider_the_flow_does_not_name_is_refused() -> None:
    with pytest.raises(RoostError, match="no provider is called 'nope'"):
        default_provider(make_flow(FLOW), RunState(), "nope")


def test_the_toolbox_offers_each_agent_its_tools(tmp_path: Path) -> None:
    (tmp_path / "loud.py").write_text(SHOUT)
    toolbox = default_toolbox(make_flow(FLOW, tmp_path / "flow.yaml"), ChildRuns(Runner))
    assert [tool.spec.name for tool in toolbox("bot", "")] == ["shout"]
    assert toolbox("USER", "") == []
