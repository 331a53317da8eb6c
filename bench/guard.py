"""The speed guard: each of roost's speed goals, measured beside its peer in one run.

    python bench/guard.py [--repeat 3] [--peers-python PY] [--only engine,cli,...] [--quick]

Prints one line per goal: the figure, the goal, and ``ok`` or ``short``. The
sections (``--only`` picks some, in this order):

- **engine**: roost and AG2 (``bench/peers/``), three members round robin and
  two agents, in memory, 2,000 messages: AG2's CPU time per message over
  roost's (goal 10x); and roost's cost per message at 10,000 messages over
  its cost at 2,000 (goal within 1.2x: flat);
- **cli**: ``roost run`` of the three members with its default SQLite store
  and the transcript to a pipe, against AG2 silent in memory (goal 1x);
- **startup**: whole commands in fresh processes: ``roost run flows/hello.yaml``
  (first run, its store created; goal 0.6 s wall), ``roost validate
  flows/hello.yaml`` and ``roost --help`` over ``python -c pass`` (0.35 s, 0.15 s);
- **server**: ``bench/serve.py``'s figures: the time ``roost serve`` adds to
  a step one run at a time (p50 5 ms, p99 20 ms), its throughput with many
  runs at once over the raw ``AsyncOpenAI`` client's (80 %), its memory per idle
  run (50 KiB), and a run of 5,000 steps through it, a stream open on it: the
  mean of its last 1,000 steps over its first 1,000 (1.2x);
- **memory**: recall (top 5) on PostgreSQL at 100,000 entries (median 5 ms);
- **runs**: ``roost runs`` over a store of 10,000 runs, whole command (0.5 s).

Every figure comes from fresh processes taking turns, ``--repeat`` rounds,
the best kept, so that a busy machine slows each side alike; ratios measured
in the same run are what count. Commands are timed with their modules compiled,
as an installed package has them (a first round, not timed, writes the bytecode
even where ``PYTHONDONTWRITEBYTECODE`` is set). The peers live in an environment of their
own (``bench/peers/requirements.txt``; ``--peers-python`` or
``ROOST_PEERS_PYTHON`` names its interpreter); without AG2 the guard says so
in one line and still prints roost's own figures. ``--quick`` runs every
section small and once (a check that the guard works; its figures are not
the goals' sizes). A benchmark, not a test: nothing here fails a build.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

# The peers' harness (one side of one scenario in a fresh process) and the other benches.
sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare

if TYPE_CHECKING:
    from collections.abc import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SECTIONS = ("engine", "cli", "startup", "server", "memory", "runs")


@dataclass(frozen=True)
class Sizes:
    """How big each section's work is: the goals' sizes, or ``--quick``'s."""

    messages: int = 2000
    flat: int = 10_000
    startup_rounds: int = 3
    server_runs: int = 300
    server_single: int = 20
    server_steps: int = 5000
    entries: int = 100_000
    recalls: int = 200
    runs: int = 10_000


QUICK = Sizes(
    messages=200, flat=400, startup_rounds=1, server_runs=10, server_single=2, server_steps=100,
    entries=2000, recalls=20, runs=200,
)  # fmt: skip


@dataclass(frozen=True)
class Row:
    """One goal's line: what was measured, the figure, the goal, and whether it is met."""

    what: str
    figure: float
    unit: str
    goal: float
    at_least: bool  # the figure must be >= goal (a ratio over a peer); else <= goal

    def met(self) -> bool:
        return self.figure >= self.goal if self.at_least else self.figure <= self.goal

    def line(self) -> str:
        sign = ">=" if self.at_least else "<="
        shown = f"{self.figure:,.2f} {self.unit}".strip()
        goal = f"{sign} {self.goal:g} {self.unit}".strip()
        return f"{self.what:66} {shown:>14}   goal {goal:12} {'ok' if self.met() else 'short'}"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------- engine and cli


def ag2_missing(peers_python: str) -> str | None:
    """Why AG2 cannot be measured with ``peers_python``, or None when it can."""
    if not Path(peers_python).exists():
        return f"no interpreter at {peers_python}"
    done = subprocess.run([peers_python, "-c", "import autogen"], capture_output=True, text=True)
    if done.returncode != 0:
        return f"{peers_python} cannot import autogen (ag2)"
    return None


def best_of_sides(
    runs: list[tuple[str, str, int]], repeat: int, peers_python: str
) -> dict[tuple[str, str, int], dict[str, float]]:
    """The best CPU and wall µs per message of each (side, scenario, messages), by turns."""
    best: dict[tuple[str, str, int], dict[str, float]] = {}
    for round_ in range(repeat):
        for side, scenario, messages in runs:
            result = compare.run_side(side, scenario, messages, peers_python)
            kept = best.setdefault((side, scenario, messages), {"cpu_us": 1e18, "wall_us": 1e18})
            for key in ("cpu_us", "wall_us"):
                kept[key] = min(kept[key], float(result[key]))  # type: ignore[arg-type]
            say(f"round {round_ + 1}: {side} {scenario} {messages}: {result['cpu_us']:.1f} µs CPU")
    return best


def engine_and_cli(sections: set[str], sizes: Sizes, repeat: int, peers_python: str) -> list[Row]:
    """The engine's and ``roost run``'s rows, roost and AG2 measured by turns."""
    missing = ag2_missing(peers_python)
    if missing:
        print(f"AG2 not measured: {missing} (see bench/peers/requirements.txt); roost alone:")
    n, flat = sizes.messages, sizes.flat
    runs: list[tuple[str, str, int]] = []
    if "engine" in sections:
        runs += [("roost", "channel", n), ("roost", "pair", n), ("roost", "routed", n)]
        runs += [("roost", "channel", flat), ("roost", "pair", flat)]
    if "cli" in sections:
        runs.append(("roost", "cli", n))
    if not missing:
        runs += [("AG2", "channel", n)] + ([("AG2", "pair", n)] if "engine" in sections else [])
    best = best_of_sides(runs, repeat, peers_python)
    rows = []
    for scenario, label in (("channel", "three members round robin"), ("pair", "two agents")):
        if "engine" not in sections:
            break
        ours = best[("roost", scenario, n)]
        theirs = best.get(("AG2", scenario, n))
        peer = f", AG2 {theirs['cpu_us']:.1f} ({theirs['wall_us']:.1f})" if theirs else ""
        print(f"engine, {label}: roost {ours['cpu_us']:.1f} µs/msg CPU "
              f"({ours['wall_us']:.1f} wall){peer}")  # fmt: skip
        if theirs:
            rows.append(Row(f"engine, {label}: AG2 over roost", theirs["cpu_us"] / ours["cpu_us"],
                            "x", 10, at_least=True))  # fmt: skip
        far = best[("roost", scenario, flat)]
        rows.append(Row(f"engine, {label}: {flat:,} msgs over {n:,} (per msg)",
                        far["cpu_us"] / ours["cpu_us"], "x", 1.2, at_least=False))  # fmt: skip
    if "engine" in sections:
        routed, plain = best[("roost", "routed", n)], best[("roost", "channel", n)]
        print(f"engine, routed channel: roost {routed['cpu_us']:.1f} µs/msg CPU")
        rows.append(Row("engine, a route on every turn: routed over plain (per msg)",
                        routed["cpu_us"] / plain["cpu_us"], "x", 1.2, at_least=False))  # fmt: skip
    if "cli" in sections:
        cli = best[("roost", "cli", n)]
        ag2 = best.get(("AG2", "channel", n))
        print(f"roost run, stored and printed: {cli['cpu_us']:.1f} µs/msg CPU "
              f"({cli['wall_us']:.1f} wall)")  # fmt: skip
        if ag2:
            rows.append(Row("roost run durable, printed: AG2 in memory over it",
                            ag2["cpu_us"] / cli["cpu_us"], "x", 1, at_least=True))  # fmt: skip
    return rows


# ---------------------------------------------------------------------- start-up


def roost_script() -> str:
    beside = Path(sys.executable).parent / "roost"
    return str(beside) if beside.is_file() else "roost"


def timed_command(argv: list[str], environ: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh process of ``argv`` run from the repository's
    root (CPU time, which a busy machine disturbs less, is shown beside the goal's wall)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=environ, capture_output=True)
    elapsed = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    return elapsed, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def startup(sizes: Sizes) -> list[Row]:
    """The start-up rows: the commands by turns, each ``roost run`` with a new store."""
    roost = roost_script()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "roost --help": [roost, "--help"],
        "roost validate": [roost, "validate", "flows/hello.yaml"],
        "roost run": [roost, "run", "flows/hello.yaml", "--no-input"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    # An installed package has its modules compiled: the first round, not timed, writes
    # them (and warms the disk cache) even where PYTHONDONTWRITEBYTECODE would forbid it.
    here = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(sizes.startup_rounds + 1):
            environ = {**here, "ROOST_DB": str(Path(folder) / f"run-{round_}.db")}
            for name, argv in commands.items():
                elapsed, spent = timed_command(argv, environ)
                if round_:
                    times[name].append(elapsed)
                    cpu[name].append(spent)
    best = {name: min(samples) for name, samples in times.items()}
    base = best["python -c pass"]
    shown = ", ".join(
        f"{name} {best[name]:.3f} s ({statistics.median(times[name]):.3f}; "
        f"CPU {min(cpu[name]):.3f})"
        for name in times
    )
    print(f"start-up, wall best of {sizes.startup_rounds} (median; best CPU): {shown}")
    return [
        Row("roost run flows/hello.yaml, whole command, new store", best["roost run"], "s",
            0.6, at_least=False),
        Row("roost validate flows/hello.yaml, over python -c pass",
            best["roost validate"] - base, "s", 0.35, at_least=False),
        Row("roost --help, over python -c pass", best["roost --help"] - base, "s", 0.15,
            at_least=False),
    ]  # fmt: skip


# ---------------------------------------------------------------------- server


def server_figures(runs: int, single_runs: int, steps: int) -> dict[str, float]:
    """bench/serve.py's figures: ms added to a step one run at a time (p50, p99), ``runs``
    runs at once through ``roost serve`` as a share of the raw client's rate, the server's
    memory per idle run, and a run of ``steps`` steps: its last steps' cost over its first."""
    import serve

    figures = serve.measure(runs=runs, latency=0.05, lone=single_runs, steps=steps)
    return {
        "p50_ms": figures.added_p50_ms,
        "p99_ms": figures.added_p99_ms,
        "share": figures.throughput * 100,
        "kib": figures.kib_per_idle_run,
        "flatness": figures.flatness,
    }


def server(sizes: Sizes) -> list[Row]:
    figures = server_figures(sizes.server_runs, sizes.server_single, sizes.server_steps)
    part = max(1, min(1000, sizes.server_steps // 5))
    return [
        Row("roost serve: added to a step, one run at a time, p50", figures["p50_ms"], "ms",
            5, at_least=False),
        Row("roost serve: added to a step, one run at a time, p99", figures["p99_ms"], "ms",
            20, at_least=False),
        Row(f"roost serve: {sizes.server_runs} runs at once, share of raw AsyncOpenAI",
            figures["share"], "%", 80, at_least=True),
        Row(f"roost serve: memory per idle run ({sizes.server_runs} more runs)",
            figures["kib"], "KiB",
            50, at_least=False),
        Row(f"roost serve: {sizes.server_steps:,}-step run, last {part:,} steps over first",
            figures["flatness"], "x", 1.2, at_least=False),
    ]  # fmt: skip


# ---------------------------------------------------------------------- memory and listings


def memory(sizes: Sizes, db: str | None) -> list[Row]:
    """Recall's median on PostgreSQL (a throwaway server unless ``db`` names one)."""
    import random

    import memory as memory_bench
    import store as store_bench

    from roost.store.memory import SqlMemory
    from roost.store.sql import SqlStore

    with store_bench.postgres(db) as url:
        if url is None:
            print("memory recall not measured: no PostgreSQL (initdb) on this machine")
            return []
        store = SqlStore(url)
        try:
            recall = SqlMemory(store)
            memory_bench.load(store, sizes.entries, random.Random(7))
            times = memory_bench.time_recalls(recall, sizes.recalls, None)
        finally:
            store.close()
    return [
        Row(f"memory recall on PostgreSQL, {sizes.entries:,} entries, median",
            statistics.median(times), "ms", 5, at_least=False),
    ]  # fmt: skip


def many_runs(path: Path, count: int) -> None:
    """A store of ``count`` runs: one ``roost run`` of flows/hello.yaml, copied."""
    environ = {**os.environ, "ROOST_DB": str(path)}
    timed_command([roost_script(), "run", "flows/hello.yaml", "--no-input"], environ)
    with sqlite3.connect(path) as db:
        (first,) = db.execute("SELECT id FROM runs").fetchone()
        columns = [row[1] for row in db.execute("PRAGMA table_info(runs)")]
        picked = ", ".join(f"? || {c}" if c == "id" else c for c in columns)
        for n in range(1, count):
            db.execute(f"INSERT INTO runs SELECT {picked} FROM runs WHERE id = ?", (f"{n}-", first))
            db.execute(
                "INSERT INTO events SELECT ? || run, seq, type, ts, payload FROM events "
                "WHERE run = ?",
                (f"{n}-", first),
            )


def listing(sizes: Sizes, repeat: int) -> list[Row]:
    """``roost runs`` over ``sizes.runs`` stored runs, whole command, best of ``repeat``."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "many.db"
        many_runs(path, sizes.runs)
        environ = {**os.environ, "ROOST_DB": str(path)}
        environ.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled modules, as installed
        timed = [timed_command([roost_script(), "runs"], environ) for _ in range(repeat + 1)]
    best = min(wall for wall, _ in timed)
    print(
        f"roost runs over {sizes.runs:,} runs: {best:.3f} s wall, "
        f"CPU {min(c for _, c in timed):.3f} s"
    )
    return [Row(f"roost runs over {sizes.runs:,} runs, whole command", best, "s", 0.5,
                at_least=False)]  # fmt: skip


# ---------------------------------------------------------------------- the guard


def arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of fresh processes")
    parser.add_argument(
        "--peers-python",
        default=os.environ.get("ROOST_PEERS_PYTHON", str(ROOT / ".venv" / "bin" / "python")),
        help="an interpreter with bench/peers/requirements.txt installed",
    )
    parser.add_argument("--only", default=",".join(SECTIONS), help="sections, comma-separated")
    parser.add_argument("--db", help="an empty PostgreSQL database for the memory section")
    parser.add_argument("--quick", action="store_true", help="everything small, once")
    args = parser.parse_args(argv)
    wanted = {part.strip() for part in args.only.split(",") if part.strip()}
    unknown = wanted - set(SECTIONS)
    if unknown:
        parser.error(f"--only: no section {', '.join(sorted(unknown))} (of {', '.join(SECTIONS)})")
    args.only = wanted
    if args.quick:
        args.repeat = 1
    if args.repeat < 1:
        parser.error("--repeat: at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    sizes = QUICK if args.quick else Sizes()
    began, load = datetime.datetime.now(datetime.UTC), os.getloadavg()
    print(f"bench/guard.py {'--quick ' if args.quick else ''}at {began:%Y-%m-%d %H:%M} UTC on "
          f"{compare.machine()}, Python {platform.python_version()}")  # fmt: skip
    rows: list[Row] = []
    sections: list[tuple[str, Callable[[], list[Row]]]] = [
        ("startup", lambda: startup(sizes)),
        ("server", lambda: server(sizes)),
        ("memory", lambda: memory(sizes, args.db)),
        ("runs", lambda: listing(sizes, args.repeat)),
    ]
    if args.only & {"engine", "cli"}:
        rows += engine_and_cli(args.only, sizes, args.repeat, args.peers_python)
    for name, section in sections:
        if name in args.only:
            try:
                rows += section()
            except Exception as exc:  # one section that cannot run leaves the others' figures
                print(f"{name} not measured: {type(exc).__name__}: {exc}".splitlines()[0])
    took = (datetime.datetime.now(datetime.UTC) - began).total_seconds()
    loads = ", ".join(f"{x:.1f}" for x in (*load, *os.getloadavg()))
    print(f"\n{len(rows)} goals, {sum(r.met() for r in rows)} ok, in {took:.0f} s; "
          f"load average (1, 5, 15 min) before and after: {loads}")  # fmt: skip
    for row in rows:
        print(row.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
