"""Ctrl-C stops a run at once, wherever it is, and leaves a log that goes on cleanly.

Each test waits until the child has reached the point where the Ctrl-C should
land (a line it printed) and only then sends SIGINT, so the signal always lands
there and every run of the test checks the same thing.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

LONG = """\
roost: 1
name: long
defaults: {provider: m, max_rounds: 1000000}
providers:
  m: {kind: scripted, replies: ["hello"], when_exhausted: repeat_last}
agents:
  a: {role: A}
  b: {role: B}
start: {from: a, to: b, content: hi}
"""

SCRIPT = "from roost.entry import main; main()"

# Runs roost as its console script does, but stops inside the import of the
# command line: on the first module ``roost.cli`` imports, it prints a line and
# sleeps, so a Ctrl-C sent after that line lands in the middle of start-up.
# (Were the signal lost, the import would go on after the sleep and the command
# would finish: a different exit code and message.)
GATED = """\
import sys, time

class Gate:
    def find_spec(self, name, path=None, target=None):
        if "roost.cli" in sys.modules and name != "roost.cli":
            sys.meta_path.remove(self)
            print("importing " + name, flush=True)
            time.sleep(120)
        return None

sys.meta_path.insert(0, Gate())
from roost.entry import main
main()
"""

# A bound on each wait, so that a child that ignores Ctrl-C fails the test
# rather than hanging it; no test asserts how quickly anything happens.
HANG_GUARD = 120


def _spawn(cwd: Path, *args: str, script: str = SCRIPT) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # A child inherits an ignored SIGINT (a runner that ignores Ctrl-C, say), and
        # Python then never raises KeyboardInterrupt: give it the disposition a terminal does.
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_when(process: subprocess.Popen[bytes], line: str) -> tuple[int, str, list[str]]:
    """Reads the child's output up to a line starting with ``line``, then presses Ctrl-C.

    Gives the exit code, the standard error and the lines read before the signal.
    """
    assert process.stdout is not None
    seen: list[str] = []
    while not (seen and seen[-1].startswith(line)):
        printed = process.stdout.readline()
        assert printed, f"the child ended before printing {line!r}: {seen}"
        seen.append(printed.decode().rstrip("\n"))
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=HANG_GUARD)  # drains what it prints meanwhile
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"Ctrl-C did not stop the child: {seen}") from None
    return process.returncode, err.decode(), seen


def _events(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_ctrl_c_stops_a_run_that_never_waits_and_retry_goes_on(tmp_path: Path) -> None:
    (tmp_path / "long.yaml").write_text(LONG)
    path = tmp_path / "run.jsonl"
    # b's first reply printed: the run is in its loop of scripted replies, which never
    # waits for anything, and has about two million replies to go.
    code, err, _ = _interrupt_when(
        _spawn(tmp_path, "run", "long.yaml", "--no-input", "--events", "run.jsonl"),
        "b → a: hello",
    )
    first = _events(path)
    run_id = first[0]["run"]
    assert (code, err) == (
        1,
        f"roost: interrupted; the run is saved. Resume it with: roost retry {run_id}\n",
    )
    assert [e["seq"] for e in first] == list(range(len(first)))
    said = [(e["from"], e["content"]) for e in first if e["type"] == "message"]
    assert said[:2] == [("a", "hi"), ("b", "hello")]
    assert "terminate" not in [e["type"] for e in first]

    code, err, seen = _interrupt_when(_spawn(tmp_path, "retry", "run.jsonl"), "a → b: hello")
    assert (code, err) == (
        1,
        "roost: interrupted; the run is saved. Resume it with: roost retry run.jsonl\n",
    ), seen
    both = _events(path)
    assert [e["seq"] for e in both] == list(range(len(both)))
    assert both[: len(first)] == first
    assert both[len(first)]["type"] == "retry"
    assert "terminate" not in [e["type"] for e in both]


def test_ctrl_c_during_start_up_is_one_line(tmp_path: Path) -> None:
    process = _spawn(tmp_path, "validate", "missing.yaml", script=GATED)
    code, err, seen = _interrupt_when(process, "importing ")
    assert (code, err) == (130, "roost: interrupted\n"), seen
