"""How long roost takes to start: the command line's first moments, over a bare interpreter.

    python bench/startup.py [--runs 20] [--warmup 2] [--compare DIR]

Times, each in a fresh process from the repository's root:

- ``python -c pass``: the interpreter alone, the floor everything else stands on;
- ``roost --help``: the command line's import and its help;
- ``roost validate flows/hello.yaml``: loading and checking a small flow;
- ``roost run flows/hello.yaml --no-input``: a whole offline run, each time
  stored in a new database in a temporary folder (the store is created, as on
  a first run).

``--compare DIR`` times the same roost commands once more with the roost
package of another source tree first on ``PYTHONPATH`` (a checkout of an older
commit, say: ``git worktree add ../before v0.1.0``), so that before and after
are measured side by side, under the same load.

With ``hyperfine`` on the PATH it does the timing; otherwise each command runs
``--runs`` times, the commands taking turns so that a busy machine slows them
alike. Best-of is the figure to compare (it is what the machine can do);
the median shows the spread. The last columns are over ``python -c pass``;
the goals are ``--help`` within 0.15 s and ``validate`` within
0.35 s of it, and the whole ``roost run`` within 0.6 s.

The modules are compiled once, in the first round (not timed), even where
``PYTHONDONTWRITEBYTECODE`` forbids it: an installed package has its bytecode,
and compiling roost's sources on every call would be timed otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Each goal: seconds, and whether it is over ``python -c pass`` or the whole command's.
TARGETS = {
    "roost --help": (0.15, True),
    "roost validate flows/hello.yaml": (0.35, True),
    "roost run flows/hello.yaml": (0.6, False),
}


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


Command = tuple[list[str], dict[str, str]]  # argv and environment


def commands(compare: Path | None) -> dict[str, Command]:
    roost, here = roost_script(), dict(os.environ)
    timed = {
        "roost --help": [roost, "--help"],
        "roost validate flows/hello.yaml": [roost, "validate", "flows/hello.yaml"],
        "roost run flows/hello.yaml": [roost, "run", "flows/hello.yaml", "--no-input"],
    }
    cmds: dict[str, Command] = {"python -c pass": ([sys.executable, "-c", "pass"], here)}
    cmds.update({name: (argv, here) for name, argv in timed.items()})
    if compare is not None:
        path = os.pathsep.join(filter(None, [str(compare), here.get("PYTHONPATH")]))
        other = {**here, "PYTHONPATH": path}
        cmds.update({f"{name} ({compare.name})": (argv, other) for name, argv in timed.items()})
    return cmds


Times = dict[str, list[tuple[float, float]]]  # each command's (wall, CPU) seconds per run


def with_hyperfine(cmds: dict[str, Command], runs: int, warmup: int) -> Times:
    """Each command's times in seconds, as hyperfine measured them (no shell in between)."""
    times: Times = {}
    with tempfile.TemporaryDirectory() as folder:
        export = Path(folder) / "times.json"
        for name, (argv, environ) in cmds.items():
            run = ["hyperfine", "-N", "--runs", str(runs), "--warmup", str(warmup)]
            run += ["--prepare", shlex.join(["rm", "-f", environ["ROOST_DB"]])]  # a new store
            run += ["--export-json", str(export), "--style", "basic", shlex.join(argv)]
            subprocess.run(run, check=True, cwd=ROOT, env=environ, stdout=subprocess.DEVNULL)
            result = json.loads(export.read_text())["results"][0]
            pairs = zip(result["user"], result["system"], strict=True)
            cpu = [user + system for user, system in pairs]
            times[name] = list(zip(result["times"], cpu, strict=True))
    return times


def by_turns(cmds: dict[str, Command], runs: int, warmup: int) -> Times:
    """Each command's times in seconds, the commands taking turns, ``warmup`` rounds dropped."""
    times: Times = {name: [] for name in cmds}
    for round_ in range(warmup + runs):
        for name, (argv, environ) in cmds.items():
            Path(environ["ROOST_DB"]).unlink(missing_ok=True)  # each run creates its store
            used, began = _children_cpu(), time.perf_counter()
            done = subprocess.run(
                argv, cwd=ROOT, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            elapsed, spent = time.perf_counter() - began, _children_cpu() - used
            if done.returncode != 0:
                sys.exit(f"{name} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
            if round_ >= warmup:
                times[name].append((elapsed, spent))
    return times


def _children_cpu() -> float:
    """CPU seconds (user and system) of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def report(times: Times, how: str) -> None:
    walls = {name: [wall for wall, _ in samples] for name, samples in times.items()}
    base_best = min(walls["python -c pass"])
    base_median = statistics.median(walls["python -c pass"])
    print(f"{how}; {len(walls['python -c pass'])} runs each, seconds (CPU: best, user + system)")
    width = max(len(name) for name in times)
    header = f"{'best':>6} {'median':>7} {'+best':>6} {'+median':>8} {'CPU':>6}  goal"
    print(f"{'command':{width}} {header}")
    for name, samples in walls.items():
        best, median = min(samples), statistics.median(samples)
        cpu = min(spent for _, spent in times[name])
        goal = TARGETS.get(name)  # the goals are for this tree, not the one compared
        verdict = ""
        if goal is not None:
            seconds, over_bare = goal
            measured = best - base_best if over_bare else best
            shown = f"+{seconds:.2f}" if over_bare else f"{seconds:.2f}"
            verdict = f"<= {shown}: {'met' if measured <= seconds else 'NOT met'}"
        print(
            f"{name:{width}} {best:6.3f} {median:7.3f} {best - base_best:6.3f} "
            f"{median - base_median:8.3f} {cpu:6.3f}  {verdict}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2, help="rounds not timed (at least 1)")
    parser.add_argument("--compare", type=Path, help="another source tree to time as well")
    options = parser.parse_args()
    options.warmup = max(options.warmup, 1)  # the first round compiles the modules
    if options.compare is not None and not (options.compare / "roost").is_dir():
        sys.exit(f"bench/startup.py: {options.compare} holds no roost package")
    with tempfile.TemporaryDirectory() as folder:
        # `roost run` stores its runs: in a database of its own, never the user's.
        os.environ["ROOST_DB"] = str(Path(folder) / "bench.db")
        # Bytecode is written by the first (warm-up) round, as an installed package has it.
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        cmds = commands(options.compare)
        if shutil.which("hyperfine"):
            times, how = with_hyperfine(cmds, options.runs, options.warmup), "hyperfine"
        else:
            times, how = by_turns(cmds, options.runs, options.warmup), "fresh processes, by turns"
    report(times, how)


if __name__ == "__main__":
    main()
