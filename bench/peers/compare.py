"""roost beside AG2, LangGraph and AutoGen AgentChat: the same scenarios, one table.

    python bench/peers/compare.py [--messages 2000] [--repeat 3] [--out FILE]

The peers are installed in a virtual environment of their own, pinned in
``bench/peers/requirements.txt`` (never among roost's dependencies):

    python -m venv .venv
    .venv/bin/pip install -r bench/peers/requirements.txt

(``--peers-python`` names another interpreter that has them.) Every figure
comes from a fresh process running one side of one scenario (``*_side.py``
beside this file); the processes take turns, ``--repeat`` rounds of them, and
the best of each is kept, so that a busy machine slows every side alike. The
figure is microseconds per message of the conversation's own work, start-up
and each side's one-off costs left out (see ``timing.py``): CPU time of that
process, and wall time. The table goes to standard output and, with ``--out``,
to a Markdown file.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

# (scenario label, {side: scenario argument}); a side missing from a row has no such scenario.
ROWS = [
    ("three members round robin, in memory",
     {"roost": "channel", "AG2": "channel", "LangGraph": "channel", "AutoGen": "channel"}),
    ("two agents, in memory",
     {"roost": "pair", "AG2": "pair", "LangGraph": "pair", "AutoGen": "pair"}),
    ("three members, every step stored in SQLite",
     {"roost": "stored", "LangGraph": "stored"}),
    ("`roost run` of the three members: default store, transcript to a pipe",
     {"roost": "cli"}),
]  # fmt: skip
SCRIPTS = {
    "roost": "roost_side.py",
    "AG2": "ag2_side.py",
    "LangGraph": "langgraph_side.py",
    "AutoGen": "autogen_side.py",
}
SIDES = list(SCRIPTS)


def run_side(side: str, scenario: str, messages: int, peers_python: str) -> dict[str, object]:
    python = sys.executable if side == "roost" else peers_python
    env = dict(os.environ)
    if side == "roost":
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [python, str(HERE / SCRIPTS[side]), scenario, "--messages", str(messages)],
        capture_output=True, text=True, cwd=HERE, env=env, timeout=3600,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{side} {scenario} failed:\n{done.stderr[-2000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.system()} {platform.release()}, {model}, {os.cpu_count()} logical CPUs"


def table(best: dict[tuple[str, str], dict[str, float]]) -> list[str]:
    lines = [
        "| scenario | " + " | ".join(SIDES) + " |",
        "| --- | " + " | ".join("---:" for _ in SIDES) + " |",
    ]
    for label, _ in ROWS:
        cells = []
        for side in SIDES:
            figure = best.get((label, side))
            cells.append(f"{figure['cpu_us']:,.1f} ({figure['wall_us']:,.1f})" if figure else "—")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def ratios(best: dict[tuple[str, str], dict[str, float]]) -> list[str]:
    """Each peer's CPU time per message over roost's, in the rows they share."""
    lines = ["| scenario | " + " | ".join(SIDES[1:]) + " |",
             "| --- | " + " | ".join("---:" for _ in SIDES[1:]) + " |"]  # fmt: skip
    for label, _ in ROWS[:3]:
        ours = best.get((label, "roost"))
        cells = []
        for side in SIDES[1:]:
            theirs = best.get((label, side))
            cells.append(f"{theirs['cpu_us'] / ours['cpu_us']:.1f}x" if ours and theirs else "—")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    cli = best.get((ROWS[3][0], "roost"))
    ag2 = best.get((ROWS[0][0], "AG2"))
    if cli and ag2:
        lines.append(
            f"| AG2 in memory over `roost run` to a pipe with its store | "
            f"{ag2['cpu_us'] / cli['cpu_us']:.1f}x | — | — |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peers-python", default=str(ROOT / ".venv" / "bin" / "python"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if not Path(args.peers_python).exists():
        sys.exit(
            f"no interpreter with the peers at {args.peers_python}: python -m venv .venv && "
            ".venv/bin/pip install -r bench/peers/requirements.txt (or --peers-python)"
        )
    began = datetime.datetime.now(datetime.UTC)
    load_before = os.getloadavg()
    best: dict[tuple[str, str], dict[str, float]] = {}
    versions: dict[str, str] = {}
    for round_ in range(args.repeat):
        for label, sides in ROWS:
            for side, scenario in sides.items():
                result = run_side(side, scenario, args.messages, args.peers_python)
                versions.update(result.pop("versions"))  # type: ignore[arg-type]
                figure = {key: float(value) for key, value in result.items()}  # type: ignore[arg-type]
                kept = best.setdefault((label, side), figure)
                kept["cpu_us"] = min(kept["cpu_us"], figure["cpu_us"])
                kept["wall_us"] = min(kept["wall_us"], figure["wall_us"])
                print(f"round {round_ + 1}: {side} {scenario}: {figure['cpu_us']:.1f} µs CPU, "
                      f"{figure['wall_us']:.1f} µs wall", file=sys.stderr, flush=True)  # fmt: skip
    load_after = os.getloadavg()
    loads = ", ".join(f"{x:.1f}" for x in (*load_before, *load_after))
    shown = ", ".join(f"{name} {version}" for name, version in sorted(versions.items()))
    text = [
        f"Measured {began:%Y-%m-%d %H:%M} UTC with `python bench/peers/compare.py "
        f"--messages {args.messages} --repeat {args.repeat}`",
        f"on {machine()}, Python {platform.python_version()}; load average (1, 5, 15 min) "
        f"before and after: {loads}.",
        f"Versions: {shown}.",
        "",
        "µs per message, CPU time of the process (wall time in brackets), best of "
        f"{args.repeat} fresh processes:",
        "",
        *table(best),
        "",
        "Each peer's CPU time per message over roost's:",
        "",
        *ratios(best),
    ]
    output = "\n".join(text) + "\n"
    print(output)
    if args.out is not None:
        args.out.write_text(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
