"""Routing on what was said: routes judged on a reply, recorded, replayed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from roost import load_flow
from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.nodes.directors import candidates
from roost.ports import MemoryLog
from tests.engine.conftest import make_flow

if TYPE_CHECKING:
    from roost.events import Event

EXAMPLE = Path(__file__).resolve().parents[2] / "flows" / "review_loop.yaml"

FORMAT = """{type: object, properties: {verdict: {enum: [approve, revise]}, score: {type: number},
      meta: {type: object, properties: {tone: {type: string}}}}, required: [verdict]}"""


def format_line(when: str) -> str:
    """The critic's reply format, for conditions that read its data: a text condition's
    critic answers in prose, which a reply format would refuse."""
    return f"reply_format: {FORMAT}" if "field" in when or "python" in when else ""


def review(when: str, reply: str, *, strategy: str = "round_robin", extra: str = "") -> str:
    """A writer and a critic whose one route back to the writer holds when ``when`` does."""
    return f"""
roost: 1
name: review
defaults: {{provider: mock}}
providers:
  mock: {{kind: scripted, replies: [draft, {json.dumps(reply)}, draft two, "{{}}"]}}
agents:
  writer: {{role: writes}}
  critic:
    role: reviews
    {format_line(when)}
  USER: {{role: a person}}
channels:
  team:
    members: [writer, critic]
    max_rounds: 3
    director: {{strategy: {strategy}}}
    transitions:
      writer: [critic]
      critic:
        - to: writer
          when: {when}
{extra}
start: {{from: USER, to: team, content: Go}}
"""


def of_type(events: list[Event], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]


async def run(text: str, path: Path | None = None) -> tuple[Runner, MemoryLog]:
    log = MemoryLog("run-1")
    runner = Runner(flow=make_flow(text, path), log=log)
    await runner.start()
    return runner, log


VERDICT = json.dumps({"verdict": "revise", "score": 0.4, "meta": {"tone": "kind"}})
CASES = [
    ("{contains: again}", "try again", True),
    ("{contains: again}", "fine", False),
    ("{equals: redo}", "  redo ", True),
    ("{equals: redo}", "redo it", False),
    ('{matches: "(?i)^RE"}', "rewrite", True),
    ('{matches: "^x"}', "rewrite", False),
    ("{field: verdict, equals: revise}", VERDICT, True),
    ("{field: verdict, equals: approve}", VERDICT, False),
    ("{field: verdict, in: [revise, other]}", VERDICT, True),
    ("{field: verdict, in: [approve]}", VERDICT, False),
    ('{field: meta.tone, matches: "^ki"}', VERDICT, True),
    ("{field: meta.mood, equals: kind}", VERDICT, False),
    ("{field: score, gt: 0.3}", VERDICT, True),
    ("{field: score, gt: 0.5}", VERDICT, False),
    ("{field: score, lt: 0.5}", VERDICT, True),
    ("{field: score, lt: 0.1}", VERDICT, False),
    ("{all: [{contains: a}, {contains: b}]}", "ab", True),
    ("{all: [{contains: a}, {contains: b}]}", "a", False),
    ("{any: [{contains: a}, {contains: b}]}", "b", True),
    ("{any: [{contains: a}, {contains: b}]}", "c", False),
    ("{not: {contains: a}}", "b", True),
    ("{not: {contains: a}}", "a", False),
]


@pytest.mark.parametrize(("when", "reply", "held"), CASES)
async def test_each_condition_decides_the_candidates(when: str, reply: str, held: bool) -> None:
    _runner, log = await run(review(when, reply))
    events = log.load()
    select = of_type(events, "select")
    if held:
        assert [(s.chosen, s.by) for s in select][-1] == ("writer", "only_candidate")
        assert select[-1].routes[0].held is True
    else:  # no route holds: the run ends as when no candidate is left
        end = of_type(events, "terminate")[-1]
        assert (end.node, end.reason) == ("team", "no_candidate")
        assert [(r.to, r.held) for r in end.routes] == [("writer", False)]


async def test_a_structured_reply_is_recorded_as_data() -> None:
    _, log = await run(review("{field: verdict, equals: revise}", VERDICT))
    critic = next(m for m in of_type(log.load(), "message") if m.from_ == "critic")
    assert critic.content == VERDICT
    assert critic.data == {"verdict": "revise", "score": 0.4, "meta": {"tone": "kind"}}
    writer = next(m for m in of_type(log.load(), "message") if m.from_ == "writer")
    assert "data" not in writer.model_dump(by_alias=True)


async def test_the_select_records_each_route_in_short() -> None:
    _, log = await run(review("{field: verdict, equals: revise}", VERDICT))
    select = of_type(log.load(), "select")[-1]
    dumped = select.model_dump(by_alias=True, mode="json")["routes"]
    assert dumped == [{"to": "writer", "when": "verdict = revise", "held": True}]


async def test_a_route_to_terminate_ends_the_run() -> None:
    extra = "        - {to: TERMINATE, when: {matches: published}}\n"
    runner, log = await run(review("{contains: nothing}", "it is published", extra=extra))
    end = of_type(log.load(), "terminate")[-1]
    assert (end.node, end.reason) == ("team", "route")
    assert [(r.to, r.held) for r in end.routes] == [("writer", False), ("TERMINATE", True)]
    assert runner.state.status == "terminated"


async def test_a_plain_name_is_always_a_candidate() -> None:
    extra = "        - writer\n"
    _, log = await run(review("{contains: nothing}", "fine", extra=extra))
    assert [s.chosen for s in of_type(log.load(), "select")] == ["writer", "critic", "writer"]


async def test_a_reply_between_two_agents_records_its_data() -> None:
    text = f"""
roost: 1
defaults: {{provider: mock}}
providers: {{mock: {{kind: scripted, replies: [{json.dumps(VERDICT)}, TERMINATE]}}}}
agents:
  critic: {{role: r, reply_format: {FORMAT}}}
  writer: {{role: w}}
start: {{from: writer, to: critic, content: my draft}}
"""
    _, log = await run(text)
    first = of_type(log.load(), "message")[1]
    assert first.from_ == "critic" and first.data["verdict"] == "revise"


def conditions_module(tmp_path: Path, body: str) -> str:
    name = f"conds_{abs(hash(body)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(body)
    sys.modules.pop(name, None)
    return name


async def test_a_python_condition_is_called_live_and_never_on_replay(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    module = conditions_module(
        tmp_path,
        "import json\ndef wants(text, data):\n"
        f"    with open({str(calls)!r}, 'a') as f: f.write(json.dumps([text, data]) + '\\n')\n"
        "    return data['verdict'] == 'revise'\n",
    )
    text = review(f'{{python: "{module}:wants"}}', VERDICT)
    _, log = await run(text, tmp_path / "flow.yaml")
    assert calls.read_text().splitlines() == [json.dumps([VERDICT, json.loads(VERDICT)])]
    assert of_type(log.load(), "select")[-1].chosen == "writer"
    report = await replay_run(None, log.load())
    assert report.identical, report.difference
    assert len(calls.read_text().splitlines()) == 1  # the replay read the decision


async def test_a_python_condition_that_raises_stops_the_run_at_an_error(tmp_path: Path) -> None:
    module = conditions_module(tmp_path, "def boom(text, data):\n    raise ValueError('no')\n")
    runner, log = await run(review(f'{{python: "{module}:boom"}}', VERDICT), tmp_path / "f.yaml")
    error = of_type(log.load(), "error")[-1]
    assert (error.from_, runner.state.status) == ("team", "error")
    assert f"python condition '{module}:boom' failed: no" in error.content


async def test_a_replay_with_routes_that_decide_otherwise_diverges_at_the_select() -> None:
    _, log = await run(review("{field: verdict, equals: revise}", VERDICT))
    recorded = log.load()
    assert (await replay_run(None, recorded)).identical
    edited = make_flow(review("{field: verdict, equals: approve}", VERDICT))
    report = await replay_run(edited, recorded)
    assert report.difference is not None
    assert report.difference.recorded is not None
    assert report.difference.recorded.type == "select"
    assert report.difference.replayed is not None
    assert report.difference.replayed.type == "terminate"


async def test_a_manual_director_offers_only_the_routes_that_held() -> None:
    extra = (
        "        - {to: USER, when: {contains: ask}}\n        - {to: critic, when: {contains: x}}"
    )
    text = review("{contains: again}", "again, ask", strategy="manual", extra=extra)
    text = text.replace("members: [writer, critic]", "members: [writer, critic, USER]")
    text = text.replace("max_rounds: 3", "max_rounds: 6")
    log = MemoryLog("run-1")
    runner = Runner(flow=make_flow(text), log=log)
    await runner.start()  # the person picks the first speaker
    await runner.continue_("writer")
    state = runner.state
    assert state.status == "paused"
    pending = state.pending
    assert pending is not None and pending.type == "interrupt"
    assert [(r.to, r.held) for r in pending.routes] == [
        ("writer", True),
        ("USER", True),
        ("critic", False),
    ]
    assert candidates(runner.flow, state, "team") == ("writer", "USER")
    await runner.continue_("writer")
    select = [s for s in of_type(log.load(), "select") if s.by == "manual"][-1]
    assert (select.chosen, select.by, select.candidates) == ("writer", "manual", ("writer", "USER"))
    assert select.routes == pending.routes


async def test_structured_data_is_read_with_the_marker_taken_off() -> None:
    reply = json.dumps({"verdict": "approve"}) + " TERMINATE"
    text = f"""
roost: 1
defaults: {{provider: mock}}
providers: {{mock: {{kind: scripted, replies: [{json.dumps(reply)}]}}}}
agents:
  critic: {{role: r, reply_format: {FORMAT}}}
  writer: {{role: w}}
start: {{from: writer, to: critic, content: my draft}}
"""
    runner, log = await run(text)
    reply_event = of_type(log.load(), "message")[1]
    assert (reply_event.content, reply_event.data) == (reply, {"verdict": "approve"})
    assert runner.state.status == "terminated"


async def test_the_example_review_loop_replays_identical() -> None:
    flow = load_flow(EXAMPLE)
    log = MemoryLog("run-1")
    runner = Runner(flow=flow, log=log)
    await runner.start()
    await runner.continue_("Signed off.")
    recorded = log.load()
    assert of_type(recorded, "terminate")[-1].reason == "route"
    report = await replay_run(None, recorded)
    assert report.identical, report.difference
