"""Hostile MCP servers: a flood on stderr, a line of 20 MiB, a server that will not die.

Each server is a real child process started by a real ``roost run``; the tests
look at what roost printed, stored and used, and at the processes left behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

FLOW = """\
roost: 1
name: hostile
mcp_servers:
  srv: {{command: {python}, args: [server.py], timeout: {timeout}}}
providers:
  p: {{kind: scripted, replies: [hi, TERMINATE]}}
agents:
  USER: {{role: u, interrupt: ALWAYS}}
  bot: {{role: b, provider: p, functions: ["srv#add"]}}
start: {{from: USER, to: bot, content: hi}}
"""

# Reports the largest resident size (KiB) of roost and the processes it waited for.
_MEASURED = """\
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True, stdin=subprocess.DEVNULL)
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(done.returncode)
"""


def _run(folder: Path, server: str, timeout: float = 20) -> tuple[int, list[str], int]:
    """``roost run`` of a flow whose one MCP server is ``server``: exit code, stderr lines,
    and the largest resident size (KiB) of roost or any process it waited for."""
    (folder / "server.py").write_text(server)
    (folder / "flow.yaml").write_text(FLOW.format(python=sys.executable, timeout=timeout))
    env = {key: value for key, value in os.environ.items() if key != "ROOST_DB"}
    roost = [sys.executable, "-c", "from roost.cli import main; main()"]
    command = [*roost, "run", "flow.yaml", "--no-input", "--events", "run.jsonl", "--db", "r.db"]
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *command],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    *lines, peak = done.stderr.splitlines()
    return done.returncode, lines, int(peak)


def _error_event(folder: Path) -> dict[str, object]:
    events = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()]
    return next(event for event in events if event["type"] == "error")


FLOOD = """\
import sys
chunk = b"noise " * (1 << 17) + b"\\n"  # 768 KiB a line
for _ in range(400):                   # 300 MiB in all
    sys.stderr.buffer.write(chunk)
sys.stderr.buffer.write(b"Error: the last words\\n")
sys.exit(1)
"""


def test_a_server_flooding_stderr_costs_roost_only_a_tail(tmp_path: Path) -> None:
    code, lines, peak_kib = _run(tmp_path, FLOOD)
    assert code == 3
    assert lines[0] == (
        f"roost: error at bot: MCP server 'srv' ({sys.executable}) failed to start: "
        "MCPError: Connection closed; it said: Error: the last words"
    )
    # Holding the 300 MiB (as a file read back whole, then split) took several times that.
    assert peak_kib < 250 * 1024, f"roost grew to {peak_kib // 1024} MiB"


LONG_LINE = """\
import sys
sys.stderr.write("x" * (20 << 20))  # one line of 20 MiB, no newline
sys.exit(1)
"""


def test_a_20_mib_line_is_quoted_in_a_few_hundred_characters(tmp_path: Path) -> None:
    code, lines, _ = _run(tmp_path, LONG_LINE)
    assert code == 3
    assert lines[0].endswith("; it said: " + "x" * 297 + "...")
    assert max(len(line) for line in lines) < 500
    content = str(_error_event(tmp_path)["content"])
    assert content.endswith("x" * 297 + "...") and len(content) < 500
    assert os.path.getsize(tmp_path / "r.db") < 1 << 20


STUBBORN = """\
import os, signal, time
for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(sig, signal.SIG_IGN)
os.fork()  # a child of its own, in the same process group
with open("pids.txt", "a") as pids:
    pids.write(f"{os.getpid()}\\n")
while True:  # never reads stdin, so never sees its end; never answers initialize
    time.sleep(1)
"""


def _gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie waiting for its reaper counts as gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return True
    return fields[0] in ("Z", "X")


def test_a_server_that_ignores_eof_and_sigterm_does_not_outlive_roost(tmp_path: Path) -> None:
    code, lines, _ = _run(tmp_path, STUBBORN, timeout=2)
    assert code == 3
    assert lines[0] == "roost: error at bot: MCP server 'srv' did not answer within 2s"
    pids = [int(pid) for pid in (tmp_path / "pids.txt").read_text().split()]
    assert len(pids) == 2
    try:
        # SIGKILL was sent before roost exited; the kernel may take a moment to carry it out.
        for _ in range(200):
            if all(_gone(pid) for pid in pids):
                break
            time.sleep(0.05)
        assert all(_gone(pid) for pid in pids), "the server outlived roost"
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # a test that failed leaves none
                os.kill(pid, 9)
