"""summarize: counting a run's events and finding where it stands."""

from __future__ import annotations

from roost.visualize.run_summary import FinalState, Tokens, summarize
from tests.visualize import flows


def test_counts_messages_routes_and_picks() -> None:
    summary = summarize(flows.load("team.yaml"), flows.team_run())
    assert summary.messages[("mathematician", "team")] == 2
    assert summary.messages[("USER", "team")] == 2
    assert summary.picks[("team", "mathematician")] == 2
    assert ("USER", "team") in summary.routes
    assert summary.tool_calls["mathematician"]["math__add"] == 1
    assert summary.visited == {"USER", "team", "mathematician", "reviewer"}


def test_tokens_sum_usage_per_node_in_either_spelling() -> None:
    log = flows.Log().llm("a", "x", 10, 5)
    log.add(
        "llm_call",
        node="a",
        provider="p",
        model="m",
        request_digest="d",
        usage={"input_tokens": 7, "output_tokens": 3},
    )
    log.add("llm_call", node="a", provider="p", model="m", request_digest="d", error="boom")
    assert summarize(flows.load("two.yaml"), log.events).tokens["a"] == Tokens(17, 8, 3)


def test_final_state_follows_pauses_resumes_and_errors() -> None:
    flow = flows.load("team.yaml")
    assert summarize(flow, []).final == FinalState("new")
    paused = summarize(flow, flows.team_run("paused")).final
    assert paused == FinalState("paused", "USER", "team", "human")
    failed = summarize(flow, flows.team_run("error")).final
    assert failed.status == "error" and failed.node == "mathematician" and failed.peer == "team"
    log = flows.Log()
    log.add("error", from_="a", to="b", content="boom").add("retry", from_="a", to="b")
    assert summarize(flow, log.events).final == FinalState("running")
    done = summarize(flow, flows.team_run()).final
    assert done == FinalState("terminated", "team", None, "max_rounds")
