"""How long roost takes to start: the command line's first moments, over a bare interpreter.

    python bench/startup.py [--runs 20] [--warmup 2]

Times, each in a fresh process from the repository's root:

- ``python -c pass``: the interpreter alone, the floor everything else stands on;
- ``roost --help``: the command line's import and its help;
- ``roost validate flows/hello.yaml``: loading and checking a small flow;
- ``roost run flows/hello.yaml --no-input``: a whole offline run, stored in a
  fresh database in a temporary folder.

With ``hyperfine`` on the PATH it does the timing; otherwise each command runs
``--runs`` times, the commands taking turns so that a busy machine slows them
alike. Best-of is the figure to compare (it is what the machine can do);
the median shows the spread. The last columns are over ``python -c pass``,
against the targets: ``--help`` under 0.25 s and ``validate`` under 0.35 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"roost --help": 0.25, "roost validate flows/hello.yaml": 0.35}


def roost_script() -> str:
    """The console script of this interpreter (not a version manager's shim, which adds its own
    start-up), else whatever ``roost`` the PATH finds."""
    beside = Path(sys.executable).parent / "roost"
    if beside.is_file():
        return str(beside)
    found = shutil.which("roost")
    if found is None:
        sys.exit("bench/startup.py: no roost console script; pip install -e . first")
    return found


def commands() -> dict[str, list[str]]:
    roost = roost_script()
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "roost --help": [roost, "--help"],
        "roost validate flows/hello.yaml": [roost, "validate", "flows/hello.yaml"],
        "roost run flows/hello.yaml": [roost, "run", "flows/hello.yaml", "--no-input"],
    }


def with_hyperfine(cmds: dict[str, list[str]], runs: int, warmup: int) -> dict[str, list[float]]:
    """Each command's times in seconds, as hyperfine measured them (no shell in between)."""
    with tempfile.TemporaryDirectory() as folder:
        export = Path(folder) / "times.json"
        argv = ["hyperfine", "-N", "--runs", str(runs), "--warmup", str(warmup)]
        argv += ["--export-json", str(export), "--style", "basic"]
        argv += [" ".join(command) for command in cmds.values()]
        subprocess.run(argv, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        results = json.loads(export.read_text())["results"]
    return {name: result["times"] for name, result in zip(cmds, results, strict=True)}


def by_turns(cmds: dict[str, list[str]], runs: int, warmup: int) -> dict[str, list[float]]:
    """Each command's times in seconds, the commands taking turns, ``warmup`` rounds dropped."""
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for round_ in range(warmup + runs):
        for name, argv in cmds.items():
            began = time.perf_counter()
            done = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            elapsed = time.perf_counter() - began
            if done.returncode != 0:
                sys.exit(f"{name} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
            if round_ >= warmup:
                times[name].append(elapsed)
    return times


def report(times: dict[str, list[float]], how: str) -> None:
    base_best = min(times["python -c pass"])
    base_median = statistics.median(times["python -c pass"])
    print(f"{how}; {len(times['python -c pass'])} runs each, seconds")
    print(f"{'command':36} {'best':>6} {'median':>7} {'+best':>6} {'+median':>8}  target")
    for name, samples in times.items():
        best, median = min(samples), statistics.median(samples)
        target = TARGETS.get(name)
        verdict = ""
        if target is not None:
            verdict = f"< {target:.2f}: {'met' if best - base_best < target else 'NOT met'}"
        print(
            f"{name:36} {best:6.3f} {median:7.3f} {best - base_best:6.3f} "
            f"{median - base_median:8.3f}  {verdict}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        # `roost run` stores its runs: in a database of its own, never the user's.
        os.environ["ROOST_DB"] = str(Path(folder) / "bench.db")
        cmds = commands()
        if shutil.which("hyperfine"):
            times, how = with_hyperfine(cmds, options.runs, options.warmup), "hyperfine"
        else:
            times, how = by_turns(cmds, options.runs, options.warmup), "fresh processes, by turns"
    report(times, how)


if __name__ == "__main__":
    main()
