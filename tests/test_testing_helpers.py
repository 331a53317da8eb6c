"""roost.testing: flows written in a test, answered by a scripted provider."""

from __future__ import annotations

import textwrap

import pytest

import roost
from roost.engine.sources import Sources
from roost.errors import FlowError
from roost.testing import call, fail, flow_from_yaml, scripted, unchecked_flow

CHAT = """
    roost: 1
    agents:
      USER: {role: A person.}
      bot: {role: You greet people.}
    start: {from: USER, to: bot, content: Hello}
"""


async def test_replies_answer_in_order_from_the_default_provider() -> None:
    flow = flow_from_yaml(CHAT, replies=["Hi!", "Bye.", "TERMINATE"])
    assert flow.defaults.provider == "scripted"
    state = await roost.run(flow)
    assert [entry.content for entry in state.history] == ["Hello", "Hi!", "Bye.", "TERMINATE"]


def test_an_indented_flow_without_replies_keeps_its_text_and_lines() -> None:
    with pytest.raises(roost.FlowError) as caught:
        flow_from_yaml(
            """
            roost: 1
            agents:
              bot: {provider: nowhere}
            """,
            path="team.yaml",
        )
    problems = [str(problem) for problem in caught.value.errors]
    assert problems == ["team.yaml:4:19: error: no provider named 'nowhere' under providers"]


def test_a_tool_that_does_not_import_is_refused_as_load_flow_refuses_it() -> None:
    text = CHAT + '    tools:\n      f: {python: "no_such_module_xyz:f"}\n'
    with pytest.raises(roost.FlowError, match="cannot import 'no_such_module_xyz'"):
        flow_from_yaml(text, replies=["Hi!"])


def test_a_flow_with_its_own_default_provider_is_refused_with_replies() -> None:
    text = CHAT + "    defaults: {provider: m}\n    providers: {m: {kind: scripted}}\n"
    with pytest.raises(roost.RoostError, match="default provider is 'm'"):
        flow_from_yaml(text, replies=["Hi!"])


def test_broken_yaml_with_replies_is_one_located_problem() -> None:
    with pytest.raises(roost.FlowError) as caught:
        flow_from_yaml("roost: 1\nagents: {a: [}\n", replies=["Hi!"])
    assert str(caught.value).startswith("flow.yaml:2:")


async def test_call_and_fail_are_replies_as_a_flow_file_writes_them() -> None:
    flow = flow_from_yaml(
        CHAT.replace("bot: {role: You greet people.}", "bot: {role: Count., functions: [mean]}")
        + '    tools:\n      mean: {python: "statistics:fmean", description: The mean.}\n',
        replies=[call("mean", data=[1, 2]), fail("busy"), "1.5", "TERMINATE"],
    )
    log = roost.MemoryLog("helpers")
    state = await roost.run(flow, log=log)
    assert state.status == "error"
    assert [e.content for e in log.load() if e.type == "tool_result"] == ["1.5"]
    assert (await roost.Runner(flow=flow, log=log).retry()).status == "terminated"


async def test_scripted_is_a_provider_to_hand_to_a_runner() -> None:
    flow = flow_from_yaml(CHAT, replies=["never used"])
    provider = scripted("Hi!", "TERMINATE")
    runner = roost.Runner(
        flow=flow, log=roost.MemoryLog("handed"), sources=Sources(providers=lambda name: provider)
    )
    state = await runner.start()
    assert [entry.content for entry in state.history] == ["Hello", "Hi!", "TERMINATE"]


async def test_scripted_can_repeat_its_last_reply() -> None:
    provider = scripted("Again.", when_exhausted="repeat_last")
    flow = flow_from_yaml(CHAT + "    defaults: {max_rounds: 3}\n", replies=["unused"])
    runner = roost.Runner(
        flow=flow, log=roost.MemoryLog("again"), sources=Sources(providers=lambda name: provider)
    )
    state = await runner.start()
    assert [entry.content for entry in state.history][1:] == ["Again.", "Again."]  # 1 reply, twice


def test_an_unchecked_flow_keeps_what_the_checks_would_refuse_and_where_it_came_from() -> None:
    text = """
        roost: 1
        agents:
          helper: {role: You help., functions: [given_in_code]}
          USER: {role: A person.}
        start: {from: USER, to: helper, content: Go}
    """
    with pytest.raises(FlowError, match="given_in_code"):
        flow_from_yaml(text)
    flow = unchecked_flow(text, path="tests/flow.yaml")
    assert flow.agents["helper"].functions == ["given_in_code"]
    assert (flow.path, flow.text) == ("tests/flow.yaml", textwrap.dedent(text))
    assert unchecked_flow({"roost": 1, "agents": {"a": {}}}).path == "<string>"
