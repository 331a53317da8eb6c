"""Mutation testing: plant a fixed list of bugs in roost, one at a time, and see which go unnoticed.

    python bench/mutants.py                      # every mutant; the table on standard output
    python bench/mutants.py --out bench/mutants.md
    python bench/mutants.py channel-cap-general jsonl-unterminated-tail   # some, by name
    python bench/mutants.py --area store         # those planted in roost/store
    python bench/mutants.py --room leases        # one room's list (--rooms names them)
    python bench/mutants.py --check              # only check the list against the code
    python bench/mutants.py --list               # name, file and change of each mutant

The mutants are listed in ``bench/mutant_list.py``, one list per room (a list's
variable name, in lower case with dashes, is the room's name: ``FORK_MEMORY`` is
``fork-memory``); each names its file, the exact
text it replaces, the replacement, and the tests that should catch it. Before
anything runs, every mutant's text must be found exactly once in its file and the
planted file must still compile to different code: otherwise the tool stops and
says which entry to update, so the list never rots silently as the code moves.

Nothing in the work tree is ever written. The files git knows are copied, as they
are in the work tree (uncommitted changes included), to a temporary folder; each
mutant is planted in that copy, its tests run there with ``PYTHONPATH`` pointing
at it (so the roost processes that tests start run the mutant too) and without
bytecode caches (so no stale ``.pyc`` outlives a mutant), and the file is put
back. An interrupt or a crash leaves the work tree as it was; the copy is removed
on the way out.

The tests of every mutant first run once without any mutant (``--no-baseline``
skips this): a test that fails already would make every mutant look caught.
A mutant is killed when its tests fail, or run past ``--timeout`` (a planted bug
that makes a run loop forever is caught, too); it survives when they pass.

Exit status: 0 when no mutant survived, 1 when some did, 2 when the list, the
tests or the copy are not as they should be.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from typing import TYPE_CHECKING

import mutant_list  # the list lives beside this file
from mutant_list import MUTANTS, Mutant

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

ROOT = Path(__file__).resolve().parent.parent
PYTEST = ("-x", "-q", "-p", "no:cacheprovider", "--no-header")
AREAS = {
    "engine": ("roost/engine/", "roost/nodes/", "roost/runstate/"),
    "store": ("roost/store/",),
    "providers": ("roost/providers/",),
    "templating": ("roost/templating/",),
}


class ListError(Exception):
    """The mutant list does not match the code or the tests any more."""


@dataclass(frozen=True)
class Outcome:
    """What planting one mutant came to."""

    mutant: Mutant
    result: str  # "killed", "timeout" (killed too) or "survived"
    caught_by: str
    seconds: float

    @property
    def survived(self) -> bool:
        return self.result == "survived"


# ---------------------------------------------------------------------------- the list


def planted(mutant: Mutant, source: str) -> str:
    """``source`` with the mutant planted; ListError unless its text is there exactly once."""
    found = source.count(mutant.old)
    if found != 1:
        where = "is not" if found == 0 else f"is there {found} times, not once,"
        raise ListError(f"{mutant.name}: its text {where} in {mutant.file}: {mutant.old!r}")
    return source.replace(mutant.old, mutant.new)


def check_mutant(mutant: Mutant, root: Path = ROOT) -> None:
    """Raises ListError when ``mutant`` cannot be planted as listed, or tests nothing."""
    path = root / mutant.file
    if not path.is_file():
        raise ListError(f"{mutant.name}: no file {mutant.file}")
    source = path.read_text(encoding="utf-8")
    changed = planted(mutant, source)
    if path.suffix == ".py":
        _check_code(mutant, source, changed)
    elif changed.split() == source.split():  # a page's configuration, say: words must change
        raise ListError(f"{mutant.name}: the replacement changes only white space")
    if not mutant.tests:
        raise ListError(f"{mutant.name}: names no tests")
    for test in mutant.tests:
        if not (root / test.split("::")[0]).exists():
            raise ListError(f"{mutant.name}: no test file {test.split('::')[0]}")


def _check_code(mutant: Mutant, source: str, changed: str) -> None:
    try:
        tree = ast.parse(changed, mutant.file)
    except SyntaxError as exc:
        raise ListError(f"{mutant.name}: the planted file does not compile: {exc}") from None
    if ast.dump(tree) == ast.dump(ast.parse(source, mutant.file)):
        raise ListError(f"{mutant.name}: the replacement changes no code, only its layout")


def check_list(mutants: Sequence[Mutant], root: Path = ROOT) -> list[str]:
    """Every problem of the list, one line each (none: it matches the code)."""
    problems = []
    names = [m.name for m in mutants]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"{name}: two mutants have this name")
    for mutant in mutants:
        try:
            check_mutant(mutant, root)
        except ListError as exc:
            problems.append(str(exc))
    return problems


def rooms(module: object = mutant_list) -> dict[str, list[Mutant]]:
    """Each room's list, by name: every list of mutants in ``module`` but ``MUTANTS``.

    Found by looking rather than kept in a table, so that adding a list just
    before the ``MUTANTS`` line is all a new room takes.
    """
    found = {}
    for variable, value in vars(module).items():
        if variable == "MUTANTS" or not isinstance(value, list) or not value:
            continue
        if all(isinstance(item, Mutant) for item in value):
            found[variable.lower().replace("_", "-")] = value
    return found


def room_problems(mutants: Sequence[Mutant], by_room: dict[str, list[Mutant]]) -> list[str]:
    """A line for each mutant of a room missing from ``mutants``, or in no room, or in two."""
    problems = []
    listed = {m.name for m in mutants}
    homes: dict[str, list[str]] = {}
    for room, members in by_room.items():
        for mutant in members:
            homes.setdefault(mutant.name, []).append(room)
            if mutant.name not in listed:
                problems.append(f"{mutant.name}: in the room {room} but not in MUTANTS")
    for mutant in mutants:
        where = homes.get(mutant.name, [])
        if len(where) != 1:
            problems.append(f"{mutant.name}: in {len(where)} rooms ({', '.join(where)}), not one")
    return problems


def chosen(
    mutants: Sequence[Mutant],
    names: Sequence[str],
    area: str | None,
    room: str | None = None,
    by_room: dict[str, list[Mutant]] | None = None,
) -> list[Mutant]:
    """The mutants named (all when none is), of ``area`` and of ``room`` when given."""
    unknown = sorted(set(names) - {m.name for m in mutants})
    if unknown:
        raise ListError(f"no mutant is called {', '.join(unknown)} (--list shows them)")
    picked = [m for m in mutants if not names or m.name in names]
    if area is not None:
        picked = [m for m in picked if m.file.startswith(AREAS[area])]
    if room is not None:
        by_room = rooms() if by_room is None else by_room
        if room not in by_room:
            raise ListError(f"no room is called {room!r}; the rooms: {', '.join(sorted(by_room))}")
        members = {m.name for m in by_room[room]}
        picked = [m for m in picked if m.name in members]
    return picked


# ---------------------------------------------------------------------------- the copy


def tracked_files(root: Path) -> list[str]:
    """The files git knows in ``root`` (and new ones it does not ignore), as paths."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (root / name).is_file()]


@contextmanager
def tree_copy(root: Path) -> Iterator[Path]:
    """A temporary copy of the work tree's files, removed however the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="roost-mutants-"))
    try:
        for name in tracked_files(root):
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, target)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def child_env(copy: Path) -> dict[str, str]:
    """The environment of the test processes: roost imported from the copy, no bytecode."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def check_copy_is_imported(copy: Path) -> None:
    """Stops when the test processes would import roost from anywhere but the copy."""
    found = subprocess.run(
        [sys.executable, "-c", "import roost; print(roost.__file__)"],
        cwd=copy,
        env=child_env(copy),
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if not Path(found).resolve().is_relative_to(copy.resolve()):
        raise ListError(f"the tests would import roost from {found!r}, not from the copy")


@contextmanager
def mutant_planted(copy: Path, mutant: Mutant) -> Iterator[None]:
    """The copy with ``mutant`` planted, its file put back however the block ends."""
    path = copy / mutant.file
    original = path.read_text(encoding="utf-8")
    path.write_text(planted(mutant, original), encoding="utf-8")
    try:
        yield
    finally:
        path.write_text(original, encoding="utf-8")


# ---------------------------------------------------------------------------- running


@dataclass(frozen=True)
class TestRun:
    """The end of one pytest run: its exit code (None: timed out) and what it printed."""

    code: int | None
    output: str


def run_tests(copy: Path, tests: Sequence[str], workers: int, timeout: float) -> TestRun:
    """Runs pytest on ``tests`` in the copy, in a process group of its own."""
    command = [sys.executable, "-m", "pytest", *tests, *PYTEST]
    # One worker: no xdist at all (the project's addopts ask for every CPU otherwise).
    command += ["-n", str(workers) if workers > 1 else "0"]
    with tempfile.TemporaryFile(mode="w+") as output:
        process = subprocess.Popen(
            command,
            cwd=copy,
            env=child_env(copy),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # Ctrl-C reaches this tool, which ends the whole group
        )
        code: int | None
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            if process.poll() is None:
                _end_group(process)
        output.seek(0)
        return TestRun(code, output.read())


def _end_group(process: subprocess.Popen[str]) -> None:
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def first_failure(output: str) -> str:
    """The first failing test pytest names in its summary (or its first error line)."""
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" ", 1)[1].split(" - ", 1)[0]
    for line in output.splitlines():
        if "Error" in line or "error" in line:
            return line.strip()[:120]
    return "(pytest failed; no test named)"


def try_mutant(copy: Path, mutant: Mutant, workers: int, timeout: float) -> Outcome:
    """Plants ``mutant`` in the copy, runs its tests, and says whether they noticed."""
    started = time.monotonic()
    with mutant_planted(copy, mutant):
        run = run_tests(copy, mutant.tests, workers, timeout)
    seconds = time.monotonic() - started
    if run.code is None:
        return Outcome(mutant, "timeout", f"no end within {timeout:g} s", seconds)
    if run.code == 0:
        return Outcome(mutant, "survived", "", seconds)
    if run.code in (1, 2):  # failures, or a collection that broke on the mutant
        return Outcome(mutant, "killed", first_failure(run.output), seconds)
    raise ListError(
        f"{mutant.name}: pytest exited {run.code} (not a test failure): "
        f"{run.output.strip().splitlines()[-1:]}"
    )


def baseline(copy: Path, mutants: Sequence[Mutant], workers: int, timeout: float) -> float:
    """Runs every listed test once without a mutant; ListError when one fails already."""
    tests = list(dict.fromkeys(test for mutant in mutants for test in mutant.tests))
    started = time.monotonic()
    run = run_tests(copy, tests, workers, timeout * 3)
    if run.code != 0:
        failed = first_failure(run.output) if run.code is not None else "a timeout"
        raise ListError(f"the tests fail without any mutant: {failed}")
    return time.monotonic() - started


# ---------------------------------------------------------------------------- the report


def _code(text: str, limit: int = 60) -> str:
    line = " ⏎ ".join(part.strip() for part in text.strip().splitlines())
    line = line if len(line) <= limit else line[: limit - 1] + "…"
    return "`" + line.replace("|", "\\|").replace("`", "'") + "`" if line else "(nothing)"


def _same_start(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def change(old: str, new: str, context: int = 24) -> str:
    """What a mutant changes, as ``before`` → ``after``: the part that differs, in context."""
    if not new.strip():
        return f"{_code(old)} removed"
    same_start = _same_start(old, new)
    same_end = _same_start(old[same_start:][::-1], new[same_start:][::-1])
    # Whole words: from a space some way before the change to one some way after it.
    start = old.rfind(" ", 0, same_start - context) + 1 if same_start > context else 0
    after = old.find(" ", len(old) - same_end + context // 2)
    drop = len(old) - after if after != -1 else 0

    def shown(text: str) -> str:
        middle = text[start : len(text) - drop]
        return ("…" if start else "") + middle + ("…" if drop else "")

    return f"{_code(shown(old), 90)} → {_code(shown(new), 90)}"


def report(outcomes: Sequence[Outcome], elapsed: float, workers: int, head: str) -> str:
    """The markdown report: a summary line, then one row per mutant."""
    survivors = [o for o in outcomes if o.survived]
    rate = 100 * len(survivors) / len(outcomes) if outcomes else 0.0
    minutes, seconds = divmod(round(elapsed), 60)
    lines = [
        "# Mutation testing report",
        "",
        f"{datetime.date.today().isoformat()}, {head}: {len(outcomes)} mutants, "
        f"{len(outcomes) - len(survivors)} killed, {len(survivors)} survived "
        f"(survival rate {rate:.1f} %), {minutes} min {seconds:02d} s "
        f"with {workers} pytest worker{'s' if workers > 1 else ''}.",
        "",
        "| mutant | file | change | result | caught by | s |",
        "| --- | --- | --- | --- | --- | ---: |",
    ]
    for o in outcomes:
        m = o.mutant
        caught = f"`{o.caught_by}`" if o.caught_by else ""
        cells = (m.name, m.file.removeprefix("roost/"), change(m.old, m.new), o.result, caught)
        lines.append("| " + " | ".join(cells) + f" | {o.seconds:.0f} |")
    if survivors:
        lines += ["", "Survivors: " + ", ".join(o.mutant.name for o in survivors)]
    return "\n".join(lines) + "\n"


def git_head(root: Path) -> str:
    """The commit the work tree is at, with ``+ changes`` when it differs from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown commit"
    return f"commit {head}" + (" + changes" if git("status", "--porcelain") else "")


# ---------------------------------------------------------------------------- main


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def run_all(mutants: Sequence[Mutant], args: argparse.Namespace) -> list[Outcome]:
    """Runs every mutant in one copy of the tree; prints progress on standard error."""
    outcomes: list[Outcome] = []
    with tree_copy(ROOT) as copy:
        check_copy_is_imported(copy)
        if not args.no_baseline:
            took = baseline(copy, mutants, args.workers, args.timeout)
            print(f"baseline: the tests pass without a mutant ({took:.0f} s)", file=sys.stderr)
        for number, mutant in enumerate(mutants, 1):
            outcome = try_mutant(copy, mutant, args.workers, args.timeout)
            outcomes.append(outcome)
            print(
                f"[{number}/{len(mutants)}] {mutant.name}: {outcome.result} "
                f"{outcome.caught_by} ({outcome.seconds:.0f} s)",
                file=sys.stderr,
            )
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("names", nargs="*", help="mutants to plant (default: all)")
    parser.add_argument("--area", choices=sorted(AREAS), help="only the mutants of this area")
    parser.add_argument("--room", help="only the mutants of this room (--rooms names them)")
    parser.add_argument("--rooms", action="store_true", help="name each room; run nothing")
    parser.add_argument("--check", action="store_true", help="check the list; run nothing")
    parser.add_argument("--list", action="store_true", help="show the mutants; run nothing")
    parser.add_argument("--workers", "-n", type=int, default=1, help="pytest-xdist workers")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per mutant")
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    args = parser.parse_args(argv)
    try:
        mutants = chosen(MUTANTS, args.names, args.area, args.room)
    except ListError as exc:
        print(f"mutants: error: {exc}", file=sys.stderr)
        return 2
    problems = check_list(MUTANTS) + room_problems(MUTANTS, rooms())
    if problems:
        for problem in problems:
            print(f"mutants: error: {problem}", file=sys.stderr)
        return 2
    if args.rooms:
        for room, members in rooms().items():
            print(f"{room}  {len(members)} mutants")
        return 0
    if args.list:
        for m in mutants:
            print(f"{m.name}  {m.file}  {change(m.old, m.new)}\n    {m.why}")
        return 0
    if args.check:
        print(f"{len(MUTANTS)} mutants, each text found once and each planted file compiling")
        return 0
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    head = git_head(ROOT)  # the tree as it is copied, not as it is once the run ends
    if args.room is not None:
        head += f", room {args.room}"
    started = time.monotonic()
    try:
        outcomes = run_all(mutants, args)
    except ListError as exc:
        print(f"mutants: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mutants: interrupted; the work tree was never changed", file=sys.stderr)
        return 130
    text = report(outcomes, time.monotonic() - started, args.workers, head)
    print(text, end="")
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return 1 if any(o.survived for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
