"""An agent's reply_format in a run: checked, asked again once, then an error entry to retry."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from roost.cli.request_diff import request_lines
from roost.engine import Runner
from roost.engine.calls import reply_formats
from roost.engine.replay import replay_run
from roost.engine.sources import Sources
from roost.engine.structured import PROBLEM_CHARS, make_format, reply_problem
from roost.messages import AssistantMessage, ModelRequest, ModelResponse, UserMessage
from roost.ports import MemoryLog
from tests.engine.conftest import make_flow, messages

if TYPE_CHECKING:
    from roost.flow.models import Flow

VERDICT: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"enum": ["approve", "revise"]}},
    "required": ["verdict"],
}
GOOD = '{"verdict": "approve"}'


def review_flow(replies: str, schema: dict[str, Any] | None = VERDICT) -> Flow:
    """A critic answering a person, with ``schema`` as its reply_format."""
    flow = make_flow(f"""
        roost: 1
        name: review
        defaults: {{provider: mock}}
        providers:
          mock: {{kind: scripted, replies: {replies}}}
        agents:
          USER: {{role: A person., interrupt: ALWAYS}}
          critic: {{role: You review drafts.}}
        start: {{from: USER, to: critic, content: "Review: hello"}}
        """)
    if schema is None:
        return flow
    critic = flow.agents["critic"].model_copy(update={"reply_format": schema})
    return flow.model_copy(update={"agents": {**flow.agents, "critic": critic}})


async def run(flow: Flow) -> tuple[Runner, MemoryLog]:
    log = MemoryLog("r")
    runner = Runner(flow=flow, log=log)
    await runner.start()
    return runner, log


def kinds(log: MemoryLog) -> list[str]:
    return [event.type for event in log.load()]


async def test_a_reply_that_follows_the_format_is_kept_after_one_call() -> None:
    runner, log = await run(review_flow(f"['{GOOD}']"))
    assert runner.state.status == "paused"
    assert messages(log.load())[-1] == ("critic", "USER", GOOD)
    assert kinds(log).count("llm_call") == 1
    assert [e.data for e in log.load() if e.type == "message"][-1] == {"verdict": "approve"}


async def test_a_reply_that_fails_is_asked_for_again_once() -> None:
    runner, log = await run(review_flow(f"['not json', '{{\"verdict\": \"maybe\"}}', '{GOOD}']"))
    assert runner.state.status == "error"
    assert kinds(log).count("llm_call") == 2 and kinds(log).count("message") == 1  # the start
    error = next(e for e in log.load() if e.type == "error")
    assert (error.from_, error.to) == ("critic", "USER")
    assert "reply_format" in error.content and "'maybe' is not one of" in error.content
    assert "at verdict" in error.content
    await runner.retry()  # the error entry is redone: the model is asked afresh
    assert runner.state.status == "paused"
    assert messages(log.load())[-1] == ("critic", "USER", GOOD)
    assert kinds(log).count("llm_call") == 3


async def test_the_second_try_is_kept_when_it_follows_the_format() -> None:
    runner, log = await run(review_flow(f"['[1, 2]', '{GOOD}']"))
    assert runner.state.status == "paused"
    assert messages(log.load())[-1] == ("critic", "USER", GOOD)
    calls = [e for e in log.load() if e.type == "llm_call"]
    assert len(calls) == 2 and calls[0].request_digest != calls[1].request_digest


async def test_the_follow_up_names_the_problem_after_the_bad_reply() -> None:
    seen: list[ModelRequest] = []

    class Capture:
        name, model = "mock", "capture"

        async def complete(self, request: ModelRequest, *, on_text: Any = None) -> ModelResponse:
            seen.append(request)
            text = "nope" if len(seen) == 1 else GOOD
            return ModelResponse(message=AssistantMessage(content=text, provider="mock"))

    capture = Capture()
    runner = Runner(
        flow=review_flow("[x]"), log=MemoryLog("r"), sources=Sources(providers=lambda name: capture)
    )
    await runner.start()
    assert len(seen) == 2
    assert all(r.reply_format is not None and r.reply_format.name == "critic_reply" for r in seen)
    assert seen[0].reply_format is not None and seen[0].reply_format.json_schema == VERDICT
    *_, said, follow_up = seen[1].messages
    assert isinstance(said, AssistantMessage) and said.content == "nope"
    assert isinstance(follow_up, UserMessage) and "it is not JSON" in follow_up.content
    assert tuple(seen[1].messages[:-2]) == tuple(seen[0].messages)


async def test_a_flow_without_formats_sends_none() -> None:
    flow = review_flow("[plain]", schema=None)
    assert reply_formats(flow) == {}
    runner, log = await run(flow)
    assert messages(log.load())[-1] == ("critic", "USER", "plain")
    assert runner._interpreter.caller.formats == {}


async def test_the_format_is_in_the_request_digest() -> None:
    _, plain = await run(review_flow(f"['{GOOD}']", schema=None))
    _, formatted = await run(review_flow(f"['{GOOD}']"))
    digests = [
        next(e.request_digest for e in log.load() if e.type == "llm_call")
        for log in (plain, formatted)
    ]
    assert digests[0] != digests[1]


def test_reply_formats_reads_each_agent_schema() -> None:
    formats = reply_formats(review_flow("[x]"))
    assert list(formats) == ["critic"]
    assert json.loads(formats["critic"].model_dump_json())["json_schema"] == VERDICT


async def test_a_run_asked_again_and_retried_replays_identical() -> None:
    flow = review_flow(f"['nope', '{{}}', '[]', '{GOOD}']")
    runner, log = await run(flow)
    await runner.retry()
    assert messages(log.load())[-1] == ("critic", "USER", GOOD)
    assert (await replay_run(flow, log.load())).identical


def test_a_request_diff_shows_the_reply_format() -> None:
    request = ModelRequest(system="s", node="critic", reply_format=make_format("critic", VERDICT))
    shown = request_lines(request)
    assert "reply format: " + json.dumps(VERDICT, sort_keys=True) in shown
    assert not any(line.startswith("reply format") for line in request_lines(ModelRequest()))


def test_a_problem_quoting_a_long_reply_stays_one_short_line() -> None:
    long_list = json.dumps(["word"] * 500)
    problem = reply_problem(make_format("critic", VERDICT), long_list)
    assert problem is not None and problem.startswith("['word', 'word'")
    assert len(problem) <= PROBLEM_CHARS and "\n" not in problem and problem.endswith("…")
    assert reply_problem(make_format("critic", VERDICT), GOOD) is None


async def test_a_structured_reply_is_checked_with_its_marker_taken_off() -> None:
    runner, log = await run(review_flow(f"['{GOOD} TERMINATE']"))
    assert kinds(log).count("llm_call") == 1  # not asked again: the JSON before the marker holds
    assert runner.state.status == "terminated"
