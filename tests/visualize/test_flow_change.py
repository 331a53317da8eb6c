"""A run rescued with --flow, drawn: the overlay, the run page and render --run honour it."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from roost.cli import main
from roost.engine import Runner
from roost.events import Event, FlowEvent
from roost.flow import load_flow_text
from roost.ports import MemoryLog
from roost.store.jsonl import JsonlLog
from roost.visualize import run_page_html
from roost.visualize.dot import flow_to_dot
from roost.visualize.run_summary import summarize

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Browser

    from roost.flow.models import Flow

BROKEN = """\
roost: 1
name: chat
defaults: {provider: mock, max_rounds: 2}
providers:
  mock: {kind: scripted, replies: ["one", "two"]}
agents:
  writer: {role: "You write. {{ 1 // 0 }}"}
  critic: {role: You criticise.}
start: {from: critic, to: writer, content: Write a poem}
"""
FIXED = BROKEN.replace("{{ 1 // 0 }}", "Be brief.")


def flow_in(folder: Path, text: str, name: str) -> Flow:
    (folder / name).write_text(text)
    return load_flow_text(text, name)


def rescued_run(folder: Path) -> tuple[Flow, list[Event]]:
    """A run stopped by its flow's template, then retried under the fixed flow."""
    broken = flow_in(folder, BROKEN, "chat.yaml")
    log = MemoryLog("run-1")

    async def go() -> None:
        await Runner(flow=broken, log=log).start()
        runner = Runner(flow=broken, log=log)
        runner.follow(flow_in(folder, FIXED, "fixed.yaml"))
        await runner.retry()

    # In a thread of its own: the browser's client runs an event loop in this one.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, go()).result()
    return broken, log.load()


def test_a_flow_change_leaves_the_final_state_as_it_was(tmp_path: Path) -> None:
    flow, events = rescued_run(tmp_path)
    paused = events[:3]  # run_start, the start message, the error
    change = next(e for e in events if isinstance(e, FlowEvent))
    moved = change.model_copy(update={"seq": 3})
    assert summarize(flow, [*paused, moved]).final == summarize(flow, paused).final
    assert summarize(flow, [*paused, moved]).final.status == "error"


def test_the_drawing_says_from_where_the_run_followed_another_flow(tmp_path: Path) -> None:
    flow, events = rescued_run(tmp_path)
    change = next(e for e in events if isinstance(e, FlowEvent))
    assert f"from event {change.seq} under fixed.yaml" in flow_to_dot(flow, events)
    assert "under fixed.yaml" not in flow_to_dot(flow, events[: change.seq])


def test_render_run_draws_a_rescued_run(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    _, events = rescued_run(tmp_path)
    JsonlLog(tmp_path / "run.jsonl", "run-1").append(events)
    # The run's first flow no longer loads (its text names a missing variable now):
    # drawing the run over FLOW needs only its events.
    (tmp_path / "run.jsonl").write_text(
        (tmp_path / "run.jsonl").read_text().replace("max_rounds: 2", "max_rounds: ${NOPE}", 1)
    )
    try:
        main(["render", "fixed.yaml", "--run", "run.jsonl", "-o", "run.dot"])
    except SystemExit as exit_:
        assert not exit_.code
    assert "under fixed.yaml" in (tmp_path / "run.dot").read_text()


def test_the_replay_page_shows_the_flow_change_as_a_step(browser: Browser, tmp_path: Path) -> None:
    flow, events = rescued_run(tmp_path)
    change = next(e for e in events if isinstance(e, FlowEvent))
    path = tmp_path / "page.html"
    path.write_text(run_page_html(flow, events), encoding="utf-8")
    page = browser.new_page()
    try:
        page.goto(path.resolve().as_uri())
        row = page.locator(f"#ev-{change.seq}")
        assert (row.locator(".head").text_content() or "").endswith("flow changed")
        assert row.locator(".body").text_content() == (
            "from here the run follows fixed.yaml (chat)"
        )
    finally:
        page.close()
