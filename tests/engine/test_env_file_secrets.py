"""A value read from a ``.env`` file is kept out of events, the store and errors as any secret.

Log records of warning level and above go to standard error in ``run_cli``, so
the outputs checked here hold them too.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tests.cli_inprocess import Ran, run_cli
from tests.engine.conftest import write_flow

if TYPE_CHECKING:
    from pathlib import Path

SECRET = "sk-dotenv-4242-kept-in-a-file"

FAILING = """\
roost: 1
name: failing
providers:
  p: {kind: openai, model: m, api_key: k, base_url: "http://127.0.0.1:9/${TOKEN}/v1",
      max_retries: 0}
agents:
  USER: {role: u, interrupt: ALWAYS}
  bot: {role: b, provider: p}
start: {from: USER, to: bot, content: hi}
"""


def roost_in(folder: Path, *args: str) -> Ran:
    """roost run in ``folder`` with an environment that does not hold TOKEN."""
    env = {k: v for k, v in os.environ.items() if k != "TOKEN"}
    env["ROOST_DB"] = f"sqlite:///{folder / 'roost.db'}"
    return run_cli(*args, cwd=folder, env=env)


def test_a_env_value_reaches_no_event_store_output_or_log(tmp_path: Path) -> None:
    path = write_flow(tmp_path)  # the flow of test_secrets_in_events, reading ${TOKEN}
    (tmp_path / ".env").write_text(f"TOKEN={SECRET}\n")
    message = f"use {SECRET} please"
    ran = roost_in(
        tmp_path, "run", str(path), "--message", message, "--events", "run.jsonl", "--no-input"
    )
    assert ran.returncode == 0, ran.stderr
    shown = roost_in(tmp_path, "show", "run.jsonl")
    exported = roost_in(tmp_path, "export", "run.jsonl")
    replayed = roost_in(tmp_path, "replay", "run.jsonl")  # loads the flow, and its .env, again
    assert replayed.returncode == 0, replayed.stderr
    outputs = (ran, shown, exported, replayed)
    for text in [part for out in outputs for part in (out.stdout, out.stderr)]:
        assert SECRET not in text
    assert "the key is ***" in exported.stdout
    assert SECRET.encode() not in (tmp_path / "roost.db").read_bytes()
    events = (tmp_path / "run.jsonl").read_text()
    assert SECRET not in events and "key *** here" in events


def test_a_env_value_in_an_error_is_masked(tmp_path: Path) -> None:
    (tmp_path / "failing.yaml").write_text(FAILING)
    (tmp_path / ".env").write_text(f"TOKEN={SECRET}\n")
    ran = roost_in(tmp_path, "run", "failing.yaml", "--events", "run.jsonl")
    assert ran.returncode != 0
    assert "Traceback" not in ran.stderr
    assert "http://127.0.0.1:9/***/v1" in ran.stderr
    recorded = (tmp_path / "run.jsonl").read_text() + ran.stdout + ran.stderr
    assert SECRET not in recorded
    assert SECRET.encode() not in (tmp_path / "roost.db").read_bytes()


def test_a_bad_env_line_stops_the_run_in_one_line(tmp_path: Path) -> None:
    path = write_flow(tmp_path)
    (tmp_path / ".env").write_text(f"# keys\nTOKEN='{SECRET}\n")
    ran = roost_in(tmp_path, "run", str(path), "--message", "hi")
    assert ran.returncode == 2
    assert ran.stderr.strip().splitlines() == [
        ".env:2:1: error: this line is not NAME=value (a quote left open, "
        "or text that is neither a variable nor a # comment)"
    ]
    assert ran.stdout == ""
