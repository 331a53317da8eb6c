"""How fast the run page is with a long run: writing it, opening it, stepping through it.

    python bench/run_page.py [--events 5000] [--chromium /usr/bin/chromium]

A run of about ``--events`` events is made by the engine (a three-member
round_robin channel whose members call a Python tool at every turn, all on a
scripted provider), written as a run page with ``run_page_html`` and opened
from disk in headless Chromium through Playwright. Reported:

1. writing the page (``run_page_html``) and its size;
2. opening it until the last event's row exists;
3. 1,000 steps with the arrow key as fast as a held-down key sends them, then
   one frame (the page draws once per frame, whatever the number of steps);
4. one step, on screen: the mean over 100 steps each followed by a frame;
5. jumping to the end, the start and the end again.

The tests check what the page shows at every step and that one step changes a
handful of elements however long the log is; these timings are reported here
only, never asserted (a shared machine makes them move).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from playwright.sync_api import sync_playwright

from roost.engine import Runner
from roost.flow import load_flow_text
from roost.ports import MemoryLog
from roost.visualize import run_page_html

if TYPE_CHECKING:
    from roost.events import Event
    from roost.flow.models import Flow

# Each member turn is a select, a model call asking for the tool, the call, its
# result, a second model call and the message: six events.
EVENTS_PER_TURN = 6

FLOW = """\
roost: 1
name: bench-replay
defaults: {{provider: mock, max_rounds: {n}}}
providers:
  mock:
    kind: scripted
    replies:
      - tool_calls: [{{name: add, arguments: {{a: 2, b: 2}}}}]
      - 2 + 2 is 4.
    when_exhausted: cycle
tools:
  add: {{python: "adder:add"}}
agents:
  alice: {{role: You are Alice., functions: [add]}}
  bob: {{role: You are Bob., functions: [add]}}
  carol: {{role: You are Carol., functions: [add]}}
  USER: {{role: A person.}}
channels:
  room:
    members: [alice, bob, carol]
    max_rounds: {n}
    director: {{strategy: round_robin}}
start: {{from: USER, to: room, content: Count with me.}}
"""

ADDER = '''\
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b
'''

STEPS = """async () => {
    const key = (k) => document.dispatchEvent(new KeyboardEvent('keydown', {key: k}));
    const frame = () => new Promise((done) => requestAnimationFrame(() => done()));
    key('Home'); await frame();
    let t = performance.now();
    for (let i = 0; i < 1000; i++) key('ArrowRight');
    await frame();
    const burst = performance.now() - t;
    t = performance.now();
    for (let i = 0; i < 100; i++) { key('ArrowRight'); await frame(); }
    const shown = (performance.now() - t) / 100;
    t = performance.now();
    key('End'); await frame(); key('Home'); await frame(); key('End'); await frame();
    const jumps = performance.now() - t;
    return JSON.stringify({burst, shown, jumps});
}"""


def make_run(folder: Path, events: int) -> tuple[Flow, list[Event]]:
    """A flow and the events of one run of it, about ``events`` long."""
    (folder / "adder.py").write_text(ADDER, encoding="utf-8")
    turns = max(1, events // EVENTS_PER_TURN)
    path = folder / "bench-replay.yaml"
    path.write_text(FLOW.format(n=turns), encoding="utf-8")
    flow = load_flow_text(path.read_text(encoding="utf-8"), str(path))
    log = MemoryLog("bench-replay")
    asyncio.run(Runner(flow=flow, log=log).start())
    return flow, log.load()


def measure(events: int, chromium: str, tries: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        flow, recorded = make_run(folder, events)
        page_path = folder / "run_page.html"
        began = time.perf_counter()
        html = run_page_html(flow, recorded)
        written = time.perf_counter() - began
        page_path.write_text(html, encoding="utf-8")
        size = page_path.stat().st_size / 2**20
        print(f"{len(recorded):,} events; run_page_html {written * 1000:.0f} ms, {size:.2f} MiB")
        last = f"#ev-{len(recorded) - 1}"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium, args=["--no-sandbox", "--disable-gpu"], headless=True
            )
            try:
                for attempt in range(1, tries + 1):
                    page = browser.new_page(viewport={"width": 1100, "height": 700})
                    began = time.perf_counter()
                    page.goto(page_path.as_uri())
                    page.wait_for_selector(last, state="attached")
                    opened = time.perf_counter() - began
                    timing = json.loads(page.evaluate(STEPS))
                    page.close()
                    print(
                        f"try {attempt}: opened {opened * 1000:.0f} ms; "
                        f"1,000 steps + one frame {timing['burst']:.0f} ms; "
                        f"one step on screen {timing['shown']:.1f} ms; "
                        f"End, Home, End {timing['jumps']:.0f} ms",
                        flush=True,
                    )
            finally:
                browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--tries", type=int, default=3)
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}; load {load}")
    measure(args.events, args.chromium, args.tries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
