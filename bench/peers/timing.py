"""What every side of the comparison shares: how a scenario is timed and reported.

Each side script runs one scenario in its own fresh process and prints one JSON
line. A scenario is run three times in that process: once short to warm up
(imports, caches), then with ``small`` and ``messages`` messages, timed; the
figure is the difference of the two timed runs over the difference of their
messages, so what every run pays once (building agents or a graph, opening a
store, reading a flow) is left out on every side alike.

No module outside the standard library is imported here: the peers' side runs
in an environment of its own, without roost.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable

Run = Callable[[int], int]  # a run of about N messages; returns the messages it made


def arguments(scenarios: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=scenarios)
    parser.add_argument("--messages", type=int, default=2000)
    return parser.parse_args()


def measure(run: Run, messages: int) -> dict[str, float]:
    """Wall and CPU µs per message between a run of messages/10 and one of messages."""
    run(20)  # warm up
    small = max(messages // 10, 20)
    timed = []
    for size in (small, messages):
        began, began_cpu = time.perf_counter(), time.process_time()
        made = run(size)
        timed.append((time.perf_counter() - began, time.process_time() - began_cpu, made))
    (wall_a, cpu_a, made_a), (wall_b, cpu_b, made_b) = timed
    extra = made_b - made_a
    return {
        "wall_us": (wall_b - wall_a) / extra * 1e6,
        "cpu_us": (cpu_b - cpu_a) / extra * 1e6,
        "messages": made_b,
    }


def report(figures: dict[str, float], versions: dict[str, str]) -> None:
    print(json.dumps({**figures, "versions": versions}), flush=True)


def check(made: int, wanted: int, who: str) -> int:
    # Every side must really make the conversation it is timed for.
    if abs(made - wanted) > 3:
        sys.exit(f"{who}: made {made} messages, {wanted} were asked for")
    return made
