"""A run from elsewhere decides nothing about your environment.

A run file records its flow's text with its ``${NAME}`` placeholders as
written. Someone crafting one may list ``public_env: [YOUR_SECRET]`` and read
the variable in a role or a description: before, ``roost replay`` expanded it
from the victim's environment and printed it in its diff, and ``roost
serve`` drew it in ``GET /runs/{id}/graph``. A recorded flow is now read
without the environment for showing, drawing and replaying; only a flow the
user gives (``--flow``, a file of the server's ``--flows``) reads it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from roost.engine import Runner
from roost.flow import load_flow_text
from roost.flow.models import Defaults
from roost.store.jsonl import JsonlLog
from tests.serve.conftest import TOKEN, start_server

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from tests.attacks.conftest import Cli

VICTIM = "victim-secret-7c41e9d2"
CRAFTED = """\
roost: 1
name: crafted
description: "${MY_SECRET_KEY}"
public_env: [MY_SECRET_KEY]
providers:
  mock: {kind: scripted, replies: ["noted"]}
agents:
  user: {interrupt: ALWAYS}
  bot: {provider: mock, role: "Your key is ${MY_SECRET_KEY}.", description: "${MY_SECRET_KEY}"}
start: {from: user, to: bot, content: hello}
"""

MINE = """\
roost: 1
name: mine
providers:
  mock: {kind: scripted, replies: ["noted"]}
agents:
  user: {interrupt: ALWAYS}
  bot: {provider: mock, role: "You help."}
start: {from: user, to: bot, content: hello}
"""


def crafted_run(folder: Path, name: str = "MY_SECRET_KEY") -> Path:
    """A run file made where the variable held the attacker's own harmless value."""
    text = CRAFTED.replace("MY_SECRET_KEY", name)
    flow = load_flow_text(text, "crafted.yaml", environ={name: "harmless"})
    path = folder / "crafted.jsonl"
    asyncio.run(Runner(flow=flow, log=JsonlLog(path, "20261202-000000-c0ffee")).start())
    return path


def test_a_replay_diff_never_shows_a_variable_the_run_file_calls_public(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_file = crafted_run(tmp_path)
    (tmp_path / "mine.yaml").write_text(MINE)
    monkeypatch.setenv("MY_SECRET_KEY", VICTIM)
    # Under a flow of one's own the diff shows the request the run's flow builds.
    said = cli("replay", str(run_file), "--flow", "mine.yaml")
    assert said.code == 4 and "-  Your key is ${MY_SECRET_KEY}." in said.out
    assert VICTIM not in said.out + said.err
    alone = cli("replay", str(run_file))  # its own role, as written: the request differs
    assert alone.code == 4 and VICTIM not in alone.out + alone.err
    shown = cli("show", str(run_file))
    assert shown.code == 0 and VICTIM not in shown.out + shown.err


def test_a_recorded_flow_reads_no_variable_and_keeps_the_defaults_it_writes() -> None:
    from roost.flow import load_recorded_flow  # new with this rule

    text = CRAFTED.replace("name: crafted", 'name: crafted\ndefaults: {max_rounds: "${R:-7}"}')
    flow = load_recorded_flow(text, "crafted.yaml")
    assert flow.description == "${MY_SECRET_KEY}" and not flow.secrets
    assert flow.agents["bot"].role == "Your key is ${MY_SECRET_KEY}."
    assert flow.defaults.max_rounds == 7
    typed = CRAFTED.replace("name: crafted", 'name: crafted\ndefaults: {max_rounds: "${R}"}')
    assert load_recorded_flow(typed, "crafted.yaml").defaults.max_rounds == Defaults().max_rounds


def test_the_server_never_draws_its_own_variables_into_an_imported_run(
    tmp_path: Path, cli: Cli
) -> None:
    run_file = crafted_run(tmp_path, "SERVER_SECRET")
    imported = cli("import", "--db", str(tmp_path / "runs.db"), str(run_file))
    assert imported.code == 0, imported.err
    run_id = imported.out.split()[2]
    server = start_server(tmp_path, token=TOKEN, env={"SERVER_SECRET": VICTIM})
    try:
        api = server.client()
        graph = api.get(f"/runs/{run_id}/graph")
        assert graph.status_code == 200, graph.text
        assert VICTIM not in graph.text and "${SERVER_SECRET}" in graph.text
        assert VICTIM not in api.get(f"/runs/{run_id}").text
    finally:
        server.stop()
    assert VICTIM not in server.errors()
