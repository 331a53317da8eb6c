"""roost batch --ray: rows as tasks of a real Ray cluster (a head on 127.0.0.1, two workers).

The cluster is started once for the module; every test that needs it shares it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from roost.events import LlmCallEvent, RunStartEvent, ToolResultEvent
from roost.store.sql import SqlStore
from tests.batch.conftest import ASK, RECALLED, TELL, TWO, Roost, host_said, jsonl, results
from tests.cli_process import _MAIN, run_cli

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
STARTED = "Ray runtime started."


def ray_env() -> dict[str, str]:
    """The environment of the head and of every driver: this roost, Ray's token auth off.

    A Ray started by ``ray.init()`` turns token auth on and writes a token into the
    home folder, which every later cluster would then require: the tests keep it off.
    """
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0"}
    env["RAY_AUTH_MODE"] = "disabled"
    env.pop("ROOST_DB", None)
    return env


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def ray_head() -> Iterator[str]:
    """The address of a Ray head on 127.0.0.1 with two worker slots, stopped afterwards."""
    port = free_port()
    temp = tempfile.mkdtemp(prefix="roost-ray-")  # short: Ray's sockets live under it
    log = Path(temp) / "head.log"
    env = ray_env()
    command = [
        str(Path(sys.executable).parent / "ray"), "start", "--head", "--block",
        "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
        "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}",
    ]  # fmt: skip
    with log.open("w") as out:
        head = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + 180
        while STARTED not in log.read_text():
            assert head.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "Ray did not start:\n" + log.read_text()
            time.sleep(0.5)
        address = f"127.0.0.1:{port}"
        joined(address, env)
        yield address
    finally:
        os.killpg(head.pid, signal.SIGTERM)  # ray start --block stops what it started
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        shutil.rmtree(temp, ignore_errors=True)


JOIN = "import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR'); ray.shutdown()"


def joined(address: str, env: dict[str, str]) -> None:
    """Waits until a driver can join the cluster: its node registers after it says it started."""
    for _ in range(5):
        done = subprocess.run(
            [sys.executable, "-c", JOIN, address], env=env, capture_output=True, timeout=120
        )
        if done.returncode == 0:
            return
    raise AssertionError(f"cannot join the Ray cluster at {address}: {done.stderr[-2000:]!r}")


# Each row's bot calls a tool; the first call anywhere writes its process id and hangs
# until it is killed; every later call returns at once.
STALL_TOOL = """\
import os, pathlib, time

def once(marker: str) -> str:
    path = pathlib.Path(marker)
    if path.exists():
        return "after the first try"
    path.write_text(str(os.getpid()))
    time.sleep(600)
    return "never"
"""


def stalling_flow(folder: Path) -> Path:
    marker = folder / "stalled.pid"
    (folder / "stall.py").write_text(STALL_TOOL)
    call = {"tool_calls": [{"name": "once", "arguments": {"marker": str(marker)}}]}
    text = TWO.replace(
        "replies: [{echo: last}, TERMINATE]",
        f"replies: [{json.dumps(call)}, {{echo: last}}, TERMINATE]",
    ).replace(
        'bot: {role: "You answer in a {{ vars.tone }} tone."}',
        'bot: {role: "You answer in a {{ vars.tone }} tone.", functions: [once]}',
    )
    text += "tools:\n  once: {python: 'stall:once', description: Wait., timeout: 600}\n"
    (folder / "stall.yaml").write_text(text)
    return marker


def test_rows_run_on_the_cluster_and_a_killed_worker_s_row_is_resumed_once(
    ray_head: str, pg_url: str, tmp_path: Path
) -> None:
    marker = stalling_flow(tmp_path)
    jsonl(tmp_path / "q.jsonl", {"message": "a"}, {"message": "b"}, {"message": "c"})
    command = [sys.executable, "-c", _MAIN, "batch", "stall.yaml", "q.jsonl"]
    command += ["--ray", ray_head, "--db", pg_url, "--batch", "r1", "--concurrency", "2"]
    driver = subprocess.Popen(
        command,
        cwd=tmp_path,
        env=ray_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() or not marker.read_text():
            assert driver.poll() is None, driver.communicate()
            assert time.monotonic() < deadline, "no row reached the tool"
            time.sleep(0.2)
        worker = int(marker.read_text())
        assert worker not in (os.getpid(), driver.pid)  # a Ray worker process
        os.kill(worker, signal.SIGKILL)  # mid-row: its run is stored up to the tool call
        out, err = driver.communicate(timeout=180)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 0, out + err
    assert "Traceback" not in out + err
    rows = results(tmp_path / "q.jsonl.results.jsonl")
    assert [(r["row"], r["status"]) for r in rows] == [
        (1, "terminated"),
        (2, "terminated"),
        (3, "terminated"),
    ]
    # Each bot echoes its tool's result: the killed row's tool call is answered as stopped.
    assert sorted(r["final"] for r in rows) == [
        "after the first try",
        "after the first try",
        "the process running this tool stopped before it finished; it was not retried",
    ]
    store = SqlStore(pg_url)
    try:
        assert sorted(run.id for run in store.runs(batch="r1")) == sorted(r["run"] for r in rows)
        logs = {r["run"]: store.log(r["run"]).load() for r in rows}
    finally:
        store.close()
    tools = []
    for run, events in logs.items():
        starts = [e for e in events if isinstance(e, RunStartEvent)]
        assert [(s.batch, s.run) for s in starts] == [("r1", run)]  # one start: never run twice
        calls = [e for e in events if isinstance(e, LlmCallEvent)]
        assert len(calls) == 3  # the killed row's first model call was not made again
        tools += [e.content for e in events if isinstance(e, ToolResultEvent)]
    # The killed row's retry resumed its run: the tool call the dead worker was in is
    # answered as stopped (a tool is never run twice), and the row went on to its end.
    assert sorted(tools) == [
        "after the first try",
        "after the first try",
        "the process running this tool stopped before it finished; it was not retried",
    ]


def test_sqlite_with_a_ray_of_this_machine_then_the_rest_on_the_cluster(
    ray_head: str, tmp_path: Path
) -> None:
    (tmp_path / "two.yaml").write_text(TWO)
    jsonl(tmp_path / "q.jsonl", {"message": "hi"}, "[1]")
    env = ray_env()
    # --ray alone: a Ray instance started for the batch on this machine, and stopped after.
    done = run_cli("batch", "two.yaml", "q.jsonl", "--ray", "--batch", "s1", cwd=tmp_path, env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    rows = results(tmp_path / "q.jsonl.results.jsonl")
    assert [(r["row"], r["status"], r["final"]) for r in rows] == [
        (1, "terminated", "hi"),
        (2, "invalid", None),
    ]
    # Run again with a row more, on the cluster: only the new row runs, into the same file.
    jsonl(tmp_path / "q.jsonl", {"message": "hi"}, "[1]", {"message": "there"})
    again = ("batch", "two.yaml", "q.jsonl", "--ray", ray_head, "--batch", "s1")
    done = run_cli(*again, cwd=tmp_path, env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "1 to run, 1 finished before, 1 invalid" in done.stderr
    rows = results(tmp_path / "q.jsonl.results.jsonl")
    assert [(r["row"], r["status"]) for r in rows] == [
        (1, "terminated"),
        (2, "invalid"),
        (3, "terminated"),
    ]
    shown = run_cli("show", rows[2]["run"], cwd=tmp_path, env=env)
    assert "USER → bot: there" in shown.stdout
    listed = run_cli("runs", "--batch", "s1", cwd=tmp_path, env=env)
    assert len(listed.stdout.splitlines()) == 3  # a header and the two runs


@pytest.mark.parametrize(
    ("args", "given"),
    [
        (["f.yaml", "q.jsonl", "--ray"], ["f.yaml", "q.jsonl", "--ray", "local"]),
        (["f.yaml", "q.jsonl", "--ray", "--db", "x"], ["f.yaml", "q.jsonl", "--ray", "local", "--db", "x"]),  # noqa: E501
        (["--ray", "f.yaml", "q.csv"], ["--ray", "local", "f.yaml", "q.csv"]),
        (["f.yaml", "--ray", "10.0.0.5:6379"], ["f.yaml", "--ray", "10.0.0.5:6379"]),
        (["f.yaml", "--", "--ray"], ["f.yaml", "--", "--ray"]),
    ],
)  # fmt: skip
def test_ray_without_an_address_means_this_machine(args: list[str], given: list[str]) -> None:
    from roost.cli.batch_command import with_ray_address

    assert with_ray_address(args) == given


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    (tmp_path / "two.yaml").write_text(TWO)
    jsonl(tmp_path / "q.jsonl", {"message": "hi"})
    return tmp_path


def test_ray_not_installed_says_how_to_install_it(
    folder: Path, roost: Roost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as where it is not installed
    code, _, err = roost("batch", "two.yaml", "q.jsonl", "--ray")
    assert (code, err.strip()) == (
        2,
        "--ray: Ray is not installed; install it with: pip install 'roost[ray]'",
    )
    assert not (folder / ".roost").exists()


def test_a_cluster_that_cannot_be_reached_is_one_line(folder: Path, roost: Roost) -> None:
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    code, _, err = roost("batch", "two.yaml", "q.jsonl", "--ray", address)
    assert (code, err.strip()) == (
        2,
        f"--ray {address}: cannot reach a Ray cluster there (Connection refused); "
        "start one with 'ray start --head' or give its address (HOST:PORT)",
    )


@pytest.mark.parametrize(
    ("address", "message"),
    [
        (
            "192.0.2.7:6379",
            "--ray 192.0.2.7:6379: a SQLite store cannot be shared by a cluster's machines; "
            "give a PostgreSQL store with --db",
        ),
        (
            "auto",
            "--ray auto: a SQLite store cannot be shared by a cluster's machines; "
            "give a PostgreSQL store with --db",
        ),
        ("head", "--ray 'head': give the cluster's address as HOST:PORT"),
        ("head:port", "--ray 'head:port': give the cluster's address as HOST:PORT"),
    ],
)
def test_a_store_or_address_a_cluster_cannot_use_is_refused_before_anything_runs(
    folder: Path, roost: Roost, address: str, message: str
) -> None:
    code, _, err = roost("batch", "two.yaml", "q.jsonl", "--ray", address)
    assert (code, err.strip()) == (2, message)
    assert not (folder / ".roost").exists()


def test_rows_on_the_cluster_store_and_recall_memory(
    ray_head: str, pg_url: str, tmp_path: Path
) -> None:
    (tmp_path / "tell.yaml").write_text(TELL)
    (tmp_path / "ask.yaml").write_text(ASK)
    jsonl(tmp_path / "tell.jsonl", {"message": "I only drink green tea."})
    jsonl(tmp_path / "ask.jsonl", {"message": "Which tea?"}, {"message": "And for the tea?"})
    env = ray_env()
    for flow, batch in (("tell", "told"), ("ask", "asked")):
        command = ("batch", f"{flow}.yaml", f"{flow}.jsonl", "--batch", batch)
        done = run_cli(*command, "--ray", ray_head, "--db", pg_url, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    rows = results(tmp_path / "ask.jsonl.results.jsonl")
    assert [r["status"] for r in rows] == ["terminated", "terminated"]
    store = SqlStore(pg_url)
    try:
        for row in rows:
            [echoed] = host_said(store, row["run"])
            assert RECALLED in echoed
    finally:
        store.close()


SLOW_FLOW = """\
roost: 1
name: slow
providers:
  llm: {{kind: openai, model: m, base_url: "{url}/v1", api_key: sk-test, max_retries: 0}}
defaults: {{provider: llm}}
agents:
  USER: {{role: A person.}}
  bot: {{role: You answer.}}
start: {{from: USER, to: bot, content: hi}}
"""


def test_sigterm_drains_a_batch_on_the_cluster(ray_head: str, tmp_path: Path) -> None:
    from fakes.gauged import GaugedLLMServer
    from fakes.script import Reply

    with GaugedLLMServer(delay=2.0, responder=lambda _: Reply(text="Done. TERMINATE")) as llm:
        (tmp_path / "slow.yaml").write_text(SLOW_FLOW.format(url=llm.url))
        jsonl(tmp_path / "q.jsonl", *({"message": f"q{n}"} for n in range(3)))
        command = [sys.executable, "-c", _MAIN, "batch", "slow.yaml", "q.jsonl", "--ray"]
        command += [ray_head, "--batch", "d1", "--concurrency", "1", "--grace", "60"]
        driver = subprocess.Popen(
            command, cwd=tmp_path, env=ray_env(), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 180
            while llm.in_flight == 0:  # the first row's call, on a Ray worker
                assert driver.poll() is None, driver.communicate()
                assert time.monotonic() < deadline, "no row reached the model"
                time.sleep(0.1)
            driver.send_signal(signal.SIGTERM)
            out, err = driver.communicate(timeout=180)
        finally:
            if driver.poll() is None:
                driver.kill()
    assert driver.returncode == 3, out + err
    assert "Traceback" not in out + err and "stopped (SIGTERM)" in err
    rows = results(tmp_path / "q.jsonl.results.jsonl")
    assert [r["status"] for r in rows] == ["terminated", "skipped", "skipped"]
    assert len(llm.requests) == 1  # the row in flight finished; none started after
