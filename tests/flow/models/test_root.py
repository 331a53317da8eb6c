"""The flow itself: its version, where its paths start, and what its nodes speak through."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from roost.flow.models import Flow, flow_file, flow_folder, lists_file_tools
from tests.flow.conftest import load


@pytest.mark.parametrize("version", [True, 1.0, "1", 2])
def test_the_version_is_the_integer_one_and_nothing_else(version: object) -> None:
    assert Flow.model_validate({"roost": 1}).roost == 1
    with pytest.raises(pydantic.ValidationError):
        Flow.model_validate({"roost": version})


def test_a_flow_given_as_text_has_no_file_and_starts_its_paths_here() -> None:
    flow = Flow.model_validate({"roost": 1})
    assert flow_file(flow) is None and flow_folder(flow) == Path()
    loaded = load("roost: 1\n")
    assert flow_file(loaded) == Path("flow.yaml") and flow_folder(loaded) == Path()


def test_nodes_speak_through_their_own_provider_else_the_default() -> None:
    flow = load(
        """\
        roost: 1
        defaults: {provider: p}
        providers: {p: {kind: scripted}, q: {kind: scripted}}
        agents: {a: {}, b: {provider: q, functions: ["builtin#read_file"]}}
        channels: {c: {members: [a, b], director: {strategy: llm, provider: q}}}
        """
    )
    assert [flow.provider_of(n) for n in ("a", "b", "c")] == ["p", "q", "q"]
    assert (flow.node_kind("a"), flow.node_kind("c"), flow.node_kind("x")) == (
        "agent",
        "channel",
        None,
    )
    assert lists_file_tools(flow)
    assert not lists_file_tools(load("roost: 1\nagents: {a: {interrupt: ALWAYS}}\n"))
