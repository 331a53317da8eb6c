"""The run page in a real browser: stepping, highlighting, search, isolation, speed."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from roost import load_flow
from roost.events import (
    ErrorEvent,
    Event,
    InterruptEvent,
    MessageEvent,
    ResumeEvent,
    SelectEvent,
    TerminateEvent,
    ToolCallEvent,
)
from roost.store.jsonl import JsonlLog
from roost.visualize.ids import slug
from tests.cli_inprocess import run_cli
from tests.fakes.run_page import Opened, open_page, state
from tests.visualize import flows
from tests.visualize.conftest import long_run
from tests.visualize.graphs import distinct_colours, non_background_share

if TYPE_CHECKING:
    from collections.abc import Iterator

    from playwright.sync_api import Browser


@pytest.fixture
def team_page(browser: Browser, tmp_path: Path) -> Iterator[Opened]:
    yield from open_page(browser, tmp_path / "team.html", flows.load("team.yaml"), flows.team_run())


def expected_edge(event: Event) -> str | None:
    """The edge a team.yaml event should light up, worked out from the event alone."""
    if isinstance(event, MessageEvent | InterruptEvent | ResumeEvent | ErrorEvent):
        member = event.to if event.from_ == "team" else event.from_
        return f"member-team-{slug(member)}"
    if isinstance(event, SelectEvent):
        return f"member-team-{slug(event.chosen)}"
    return None


def test_every_step_highlights_the_events_edge_and_message(team_page: Opened) -> None:
    page, events = team_page.page, flows.team_run()
    assert state(page)["counter"] == f"1 / {len(events)}"
    counts: dict[str, int] = {}
    for index, event in enumerate(events):
        if index:
            page.keyboard.press("ArrowRight")
        shown = state(page)
        assert shown["counter"] == f"{index + 1} / {len(events)}"
        assert shown["current"] == [f"ev-{index}"]
        assert shown["future"] == len(events) - index - 1
        edge = expected_edge(event)
        assert shown["edges"] == ([edge] if edge else [])
        if isinstance(event, MessageEvent):
            assert edge is not None and shown["body"] == event.content
            assert event.content[:50] in str(shown["now"])
            counts[edge] = counts.get(edge, 0) + 1
            label = page.evaluate(
                f"document.getElementById('{edge}').querySelector('text').textContent"
            )
            assert label.strip() == f"{counts[edge]} msg" + ("s" if counts[edge] > 1 else "")
            assert shown["nodes"] == sorted({f"node-{slug(event.from_)}", f"node-{slug(event.to)}"})
        last = index == len(events) - 1
        assert shown["stateShown"] == last
        assert shown["ended"] == (["node-team"] if last else [])
    assert team_page.foreign_requests() == [] and team_page.errors == []


def test_buttons_and_keys_go_back_and_forth(team_page: Opened) -> None:
    page = team_page.page
    page.click("#next")
    page.click("#next")
    assert state(page)["current"] == ["ev-2"]
    page.click("#prev")
    assert state(page)["current"] == ["ev-1"]
    page.click("#last")
    assert state(page)["current"] == [f"ev-{len(flows.team_run()) - 1}"]
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert state(page)["current"] == [f"ev-{len(flows.team_run()) - 3}"]
    page.keyboard.press("Home")
    assert state(page)["current"] == ["ev-0"]
    page.click("#prev")  # stays at the first event
    assert state(page)["current"] == ["ev-0"]
    page.evaluate(
        "() => { const s = document.getElementById('slider'); s.value = '9';"
        " s.dispatchEvent(new Event('input')); }"
    )
    assert state(page)["current"] == ["ev-9"]
    page.click("#ev-3")  # a transcript row is a way to jump too
    assert state(page)["current"] == ["ev-3"]
    assert team_page.foreign_requests() == [] and team_page.errors == []


def test_tool_calls_and_director_choices_show_where_they_happened(team_page: Opened) -> None:
    page, events = team_page.page, flows.team_run()
    select = next(i for i, e in enumerate(events) if isinstance(e, SelectEvent))
    tool = next(i for i, e in enumerate(events) if isinstance(e, ToolCallEvent))
    for _ in range(select):
        page.keyboard.press("ArrowRight")
    shown = state(page)
    assert shown["callout"] == "chosen by team (llm)"
    assert shown["nodes"] == ["node-mathematician", "node-team"]
    assert "chose mathematician (llm) from mathematician, reviewer" in str(shown["now"])
    for _ in range(tool - select):
        page.keyboard.press("ArrowRight")
    shown = state(page)
    assert shown["callout"] == 'math__add({"a":2,"b":2})'
    assert shown["nodes"] == ["node-mathematician"] and shown["edges"] == []
    # The callout sits just below the node it belongs to.
    boxes = page.evaluate(
        """() => [document.getElementById('node-mathematician').getBoundingClientRect().bottom,
                  document.getElementById('callout').getBoundingClientRect().top]"""
    )
    assert 0 <= boxes[1] - boxes[0] < 40


def test_model_calls_show_tokens_and_the_running_total(team_page: Opened) -> None:
    bodies = team_page.page.evaluate(
        "[...document.querySelectorAll('.ev.llm_call .body')].map(e => e.textContent)"
    )
    assert bodies[:3] == [
        "gpt · gpt-4o-mini · 42 tokens",
        "gpt · gpt-4o-mini · 58 tokens",
        "gpt · gpt-4o-mini · 76 tokens (134 by mathematician so far)",
    ]


def test_search_jumps_to_a_message(team_page: Opened) -> None:
    page = team_page.page
    page.fill("#query", "3 + 3")
    page.keyboard.press("Enter")
    shown = state(page)
    events = flows.team_run()
    index = int(str(shown["current"][0]).removeprefix("ev-"))  # type: ignore[index]
    found = events[index]
    assert isinstance(found, MessageEvent) and "3 + 3" in found.content
    assert page.text_content("#found") == f"event #{events[index].seq}"
    page.fill("#query", "no such words anywhere")
    page.keyboard.press("Enter")
    assert page.text_content("#found") == "no match"
    assert state(page)["current"] == shown["current"]


def test_hostile_text_is_shown_as_text(team_page: Opened) -> None:
    page = team_page.page
    page.click("#last")
    assert page.evaluate("document.querySelectorAll('#transcript b:not(.head b)').length") == 0
    bodies = page.evaluate("[...document.querySelectorAll('.ev .body')].map(e => e.textContent)")
    assert "Correct </script><b>bold</b>" in bodies
    assert team_page.errors == []


def test_screenshot_is_not_blank(team_page: Opened, tmp_path: Path) -> None:
    page = team_page.page
    for _ in range(8):
        page.keyboard.press("ArrowRight")
    shot = page.screenshot(path=str(tmp_path / "replay.png"))
    assert distinct_colours(shot) > 20
    assert non_background_share(shot) > 0.05
    assert team_page.foreign_requests() == [] and team_page.errors == []


def test_two_agent_page_lights_direct_message_edges(browser: Browser, tmp_path: Path) -> None:
    events = flows.two_run()
    for opened in open_page(browser, tmp_path / "two.html", flows.load("two.yaml"), events):
        page = opened.page
        page.keyboard.press("ArrowRight")
        assert state(page)["edges"] == ["message-USER-assistant"]
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert state(page)["edges"] == ["message-assistant-USER"]
        assert state(page)["body"] == "4"
        assert opened.errors == [] and opened.foreign_requests() == []


def test_bare_flow_page_has_the_graph_and_no_steps(browser: Browser, tmp_path: Path) -> None:
    for opened in open_page(browser, tmp_path / "flow.html", flows.load("team.yaml"), []):
        page = opened.page
        assert page.is_disabled("#next")
        assert page.locator("svg g.node").count() >= 6
        assert "flow as written" in (page.text_content("#now") or "")
        assert opened.errors == [] and opened.foreign_requests() == []


def test_five_thousand_events_step_through_to_the_end(browser: Browser, tmp_path: Path) -> None:
    # How fast this is lives in bench/run_page.py; here, what the steps do.
    events = long_run(5000)
    for opened in open_page(browser, tmp_path / "long.html", flows.load("team.yaml"), events):
        page = opened.page
        page.wait_for_selector("#ev-4999")
        counter = page.evaluate(
            """async () => {
            const key = (k) => document.dispatchEvent(new KeyboardEvent('keydown', {key: k}));
            const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
            for (let i = 0; i < 1000; i++) key('ArrowRight');
            await frame();
            const afterBurst = document.getElementById('counter').textContent;
            key('End'); await frame(); key('Home'); await frame(); key('End'); await frame();
            return [afterBurst, document.getElementById('counter').textContent];
        }"""
        )
        assert counter == [f"1001 / {len(events)}", f"{len(events)} / {len(events)}"]
        # The real guarantee, free of timing noise: one step touches a handful of elements,
        # however long the log is (the transcript is built once, never rebuilt).
        changed = page.evaluate(
            """async () => {
            const seen = new Set();
            const observer = new MutationObserver((records) => {
              for (const r of records) seen.add(r.target);
            });
            observer.observe(document.body, {subtree: true, attributes: true, childList: true,
                                             characterData: true});
            document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Home'}));
            await new Promise((done) => requestAnimationFrame(() => done()));
            await new Promise((done) => setTimeout(done, 0));
            seen.clear();
            for (let i = 0; i < 50; i++) {
              document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'}));
            }
            await new Promise((done) => requestAnimationFrame(() => done()));
            await new Promise((done) => setTimeout(done, 0));
            observer.disconnect();
            return [...seen].filter((n) => n.closest && n.closest('#transcript')).length;
        }"""
        )
        assert changed <= 2 + 50 * 2, changed
        page.fill("#query", "the sum is 1000")
        page.keyboard.press("Enter")
        current = state(page)["body"]
        assert current == "turn 999: the sum is 1000"
        assert opened.errors == [] and opened.foreign_requests() == []


def test_a_real_run_steps_through_every_event(browser: Browser, tmp_path: Path) -> None:
    """A run made by the engine (flows/math-chat.yaml, scripted, paused at the client)."""
    root = Path(__file__).resolve().parents[2]
    command = ["run", str(root / "flows" / "math-chat.yaml"), "--events", "run.jsonl", "--no-input"]
    env = {**os.environ, "ROOST_DB": f"sqlite:///{tmp_path / 'runs.db'}"}
    done = run_cli(*command, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    flow = load_flow(root / "flows" / "math-chat.yaml")
    events = JsonlLog(tmp_path / "run.jsonl").load()
    assert any(isinstance(e, SelectEvent) for e in events)
    for opened in open_page(browser, tmp_path / "real.html", flow, events):
        page = opened.page
        for index, event in enumerate(events):
            if index:
                page.keyboard.press("ArrowRight")
            shown = state(page)
            assert shown["current"] == [f"ev-{index}"]
            if isinstance(event, MessageEvent):
                into = event.to in flow.channels
                channel, member = (event.to, event.from_) if into else (event.from_, event.to)
                assert shown["edges"] == [f"member-{slug(channel)}-{slug(member)}"]
                assert shown["body"] == event.content
            if isinstance(event, SelectEvent):
                assert shown["edges"] == [f"member-{slug(event.channel)}-{slug(event.chosen)}"]
                assert shown["callout"] == f"chosen by {event.channel} ({event.by})"
        last = events[-1]
        if isinstance(last, TerminateEvent):
            assert shown["ended"] == [f"node-{slug(last.node)}"]
        elif isinstance(last, InterruptEvent | ErrorEvent):
            assert shown["ended"] == [f"node-{slug(last.from_)}"]
        assert opened.errors == [] and opened.foreign_requests() == []


def test_approvals_and_child_runs_are_described(browser: Browser, tmp_path: Path) -> None:
    call = {"id": "c1", "name": "summarize", "arguments": {"message": "a trip"}}
    log = flows.Log().message("USER", "assistant", "Summarize it.")
    log.add("tool_call", agent="assistant", **call)
    log.add("interrupt", from_="USER", to="assistant", reason="tool_approval", tool_call=call)
    log.add("resume", from_="USER", to="assistant", feedback="yes")
    log.add(
        "tool_result",
        agent="assistant",
        id="c1",
        name="summarize",
        content="Short.",
        child_run="child-1",
    )
    two = flows.load("two.yaml")
    for opened in open_page(browser, tmp_path / "approval.html", two, log.events):
        page = opened.page
        for _ in range(2):
            page.keyboard.press("ArrowRight")
        waiting = "waiting for USER (answering assistant) · tool approval: "
        assert state(page)["body"] == waiting + 'summarize({"message":"a trip"})'
        page.keyboard.press("End")
        head = page.text_content(".ev.current .head") or ""
        assert head.endswith("assistant ← summarize · child run child-1")
        assert state(page)["callout"] == "Short."
        assert opened.errors == [] and opened.foreign_requests() == []


TIDES = """\
roost: 1
name: tides
defaults: {provider: talk, max_rounds: 6, summary_provider: writer}
providers:
  talk:
    kind: scripted
    context_window: 100
    when_exhausted: cycle
    replies:
      - The tide comes in twice a day, pulled by the moon and a little by the sun.
      - And it goes out twice a day, leaving pools where crabs and small fish wait.
  writer: {kind: scripted, when_exhausted: cycle, replies: ["They talked about the tides."]}
agents:
  a: {role: You are a.}
  b: {role: You are b.}
start: {from: a, to: b, content: Tell me about the tides.}
"""


def test_compactions_are_marked_on_the_timeline(browser: Browser, tmp_path: Path) -> None:
    (tmp_path / "tides.yaml").write_text(TIDES)
    env = {**os.environ, "ROOST_DB": f"sqlite:///{tmp_path / 'runs.db'}"}
    done = run_cli("run", "tides.yaml", "--events", "run.jsonl", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    events = JsonlLog(tmp_path / "run.jsonl").load()
    compacts = [i for i, e in enumerate(events) if e.type == "compact"]
    assert len(compacts) == 2
    for opened in open_page(
        browser, tmp_path / "tides.html", load_flow(tmp_path / "tides.yaml"), events
    ):
        page = opened.page
        ticks = page.eval_on_selector_all("#compactions option", "os => os.map(o => o.value)")
        assert ticks == [str(i) for i in compacts]
        assert page.get_attribute("#slider", "list") == "compactions"
        marks = page.query_selector_all("#marks .mark")
        assert len(marks) == 2
        marks[1].click()
        shown = state(page)
        assert shown["current"] == [f"ev-{compacts[1]}"]
        head = page.text_content(".ev.current .head") or ""
        assert head.endswith("b's view of its talk with a compressed")
        assert shown["body"].startswith("summary through #7: ~")
        assert shown["body"].endswith("tokens · summary: They talked about the tides.")
        assert opened.errors == [] and opened.foreign_requests() == []
