"""A store that cannot be opened is one line naming it, with no password in it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from tests.cli_inprocess import Ran, run_cli

if TYPE_CHECKING:
    from pathlib import Path

FLOW = """\
roost: 1
name: s
providers:
  p: {kind: scripted, replies: [hi]}
agents:
  USER: {role: u, interrupt: ALWAYS}
  bot: {role: b, provider: p}
start: {from: USER, to: bot, content: hi}
"""


def _roost(cwd: Path, *args: str) -> Ran:
    (cwd / "flow.yaml").write_text(FLOW)
    env = {key: value for key, value in os.environ.items() if key != "ROOST_DB"}
    return run_cli(*args, cwd=cwd, env=env)


def _one_line(result: Ran) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.mark.parametrize("command", [["run", "flow.yaml", "--no-input"], ["runs"]])
def test_secret_query_values_of_a_url_are_masked(tmp_path: Path, command: list[str]) -> None:
    url = "postgresql://u@127.0.0.1:9/x?password=SECRETPW&sslmode=disable&api_token=TOKENVALUE"
    result = _roost(tmp_path, *command, "--db", url)
    line = _one_line(result)
    assert result.returncode == 1
    assert "SECRETPW" not in result.stderr + result.stdout
    assert "TOKENVALUE" not in result.stderr + result.stdout
    assert "postgresql+psycopg://u@127.0.0.1:9/x?" in line
    assert "password=***" in line and "api_token=***" in line and "sslmode=disable" in line


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql://u:hunter2pw@127.0.0.1:notaport/x",
            "'postgresql+psycopg://u:***@127.0.0.1:notaport/x': its port is not a number",
        ),
        ("://u:hunter2pw@h/x?key=hunter2pw", "'://u:***@h/x?key=***': cannot parse it"),
    ],
)
def test_a_url_that_does_not_parse_is_bad_use(tmp_path: Path, url: str, shown: str) -> None:
    for command in (["run", "flow.yaml"], ["runs"]):
        result = _roost(tmp_path, *command, "--db", url)
        assert result.returncode == 2
        assert _one_line(result).endswith(f"invalid database URL {shown}")
        assert "hunter2pw" not in result.stderr + result.stdout


def test_a_default_store_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    # A regular file where the .roost folder should be: mkdir fails even for root,
    # as it does in a read-only folder.
    (tmp_path / ".roost").write_text("not a folder")
    result = _roost(tmp_path, "run", "flow.yaml", "--no-input")
    assert result.returncode == 1
    assert _one_line(result).endswith(
        "cannot make the run store's folder '.roost': '.roost' is a file; "
        "give another place with --db or ROOST_DB"
    )


def test_a_db_path_under_a_file_names_the_folder_and_the_reason(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("a file")
    result = _roost(tmp_path, "run", "flow.yaml", "--no-input", "--db", "plain/sub/runs.db")
    assert result.returncode == 1
    assert "cannot make the run store's folder 'plain/sub': 'plain' is a file" in _one_line(result)
    assert not (tmp_path / "plain").is_dir()


def test_a_database_url_in_a_printed_hint_has_its_secrets_masked() -> None:
    from roost.store.sql import masked_db

    assert masked_db("postgresql://roost:hunter22@db/x") == "postgresql://roost:***@db/x"
    assert masked_db("postgresql://u@db/x?password=SECRETPW&sslmode=on") == (
        "postgresql://u@db/x?password=***&sslmode=on"
    )
    assert masked_db(".roost/other.db") == ".roost/other.db"
