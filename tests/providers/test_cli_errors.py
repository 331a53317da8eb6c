"""A provider failure as a user meets it on the command line: one line, exit 3, retry resumes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from fakes.script import FakeCall, Reply, Status

from .conftest import API_KEY, roost

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

DATA = Path(__file__).parent / "data"


def test_refused_key_stops_the_run_and_retry_resumes_it(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    flow = tmp_path / "adder.yaml"
    flow.write_text(
        (DATA / "adder.yaml").read_text().replace("provider: PROVIDER", "provider: chat")
    )
    shutil.copy(DATA / "calc.py", tmp_path / "calc.py")
    env = {"FAKE_LLM_URL": server.url, "FAKE_LLM_KEY": API_KEY, "ROOST_DB": ""}
    events = tmp_path / "run.jsonl"

    server.script(Status(401, f"Incorrect API key provided: {API_KEY}", "invalid_api_key"))
    failed = roost("run", str(flow), "--no-input", "--events", str(events), cwd=tmp_path, env=env)
    output = failed.stdout + failed.stderr
    assert failed.returncode == 3, output
    assert "Traceback" not in output
    assert "provider 'chat'" in output and "HTTP 401" in output
    assert API_KEY not in output and API_KEY not in events.read_text()

    server.script(
        Reply(calls=(FakeCall("add", {"a": 2, "b": 3}, id="c1"),)), Reply(text="2 + 3 = 5")
    )
    resumed = roost("retry", str(events), cwd=tmp_path, env=env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "2 + 3 = 5" in resumed.stdout
    assert API_KEY not in resumed.stdout + resumed.stderr + events.read_text()
    assert len(server.requests) == 3
