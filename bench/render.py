"""How long drawing takes: DOT text, the SVG laid out by Graphviz, and the run page.

    python bench/render.py [--repeat 7]

For every example flow under flows/ (each run offline first on its scripted
providers, in this process) and for a generated flow of 30 agents in three
channels, reported in milliseconds (the median of ``--repeat`` tries, wall
clock and this process's CPU):

1. ``dot``: building the DOT text of the bare flow (``flow_to_dot``);
2. ``svg``: the same laid out into SVG by Graphviz (``render_bytes``), which runs
   the ``dot`` program: its time is wall clock, not this process's CPU;
3. ``run dot`` and ``run svg``: the same with the run drawn over the flow;
4. ``page``: the run page of that run (``run_page_html``: SVG, counts, events).

The tests check what the drawings hold; these timings are reported here only,
never asserted (a shared machine makes them move).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from roost import load_flow
from roost.engine import Runner
from roost.flow.models import Flow
from roost.ports import MemoryLog
from roost.visualize import flow_to_dot, run_page_html
from roost.visualize.output import render_bytes

if TYPE_CHECKING:
    from collections.abc import Callable

    from roost.events import Event

ROOT = Path(__file__).resolve().parents[1]


def example_flows() -> list[Path]:
    """The YAML files under flows/ that are roost flows (they carry a ``roost:`` version)."""
    found = []
    for path in sorted((ROOT / "flows").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "roost" in data:
            found.append(path)
    return found


def run_offline(flow: Flow) -> list[Event]:
    """The events of one run of ``flow`` on its scripted providers, to its end or first pause."""
    log = MemoryLog(flow.name)
    asyncio.run(Runner(flow=flow, log=log).start())
    return log.load()


def large_flow(agents: int = 30) -> Flow:
    """A made-up flow of ``agents`` scripted agents in three channels, with a person."""
    names = [f"agent{i:02d}" for i in range(agents - 1)]
    spec: dict[str, Any] = {
        "roost": 1,
        "name": f"large-{agents}",
        "providers": {"mock": {"kind": "scripted", "replies": ["ok"], "when_exhausted": "cycle"}},
        "defaults": {"provider": "mock", "max_rounds": 30},
        "agents": {name: {"role": f"You are {name}."} for name in names},
        "channels": {},
        "start": {"from": "USER", "to": "room0", "content": "Let us begin."},
    }
    spec["agents"]["USER"] = {"interrupt": "ALWAYS"}
    for index in range(3):
        members = names[index::3]
        transitions = {m: [members[(j + 1) % len(members)]] for j, m in enumerate(members)}
        spec["channels"][f"room{index}"] = {
            "members": members + (["USER"] if index == 0 else []),
            "director": {"strategy": "round_robin"},
            "transitions": transitions,
        }
    return Flow.model_validate(spec)


def timed(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall-clock and CPU milliseconds of ``action`` over ``repeat`` tries."""
    action()  # warm: imports and caches are not what is measured
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def measure(name: str, flow: Flow, repeat: int) -> None:
    events = run_offline(flow)
    cells = [
        timed(lambda: flow_to_dot(flow), repeat),
        timed(lambda: render_bytes(flow, None, "svg"), repeat),
        timed(lambda: flow_to_dot(flow, events), repeat),
        timed(lambda: render_bytes(flow, events, "svg"), repeat),
        timed(lambda: run_page_html(flow, events), repeat),
    ]
    shown = "".join(f"{wall:>9.1f}{cpu:>7.1f}" for wall, cpu in cells)
    print(f"{name:<16}{len(events):>7}{shown}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}; load {load}; median of {args.repeat}, ms wall / cpu")
    heads = ["dot", "svg", "run dot", "run svg", "page"]
    print(f"{'flow':<16}{'events':>7}" + "".join(f"{head:>16}" for head in heads))
    for path in example_flows():
        measure(path.stem, load_flow(path), args.repeat)
    measure("large-30", large_flow(), args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
