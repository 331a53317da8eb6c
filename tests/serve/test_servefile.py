"""The serve configuration file: its schedules read, each problem one located line."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.errors import FlowError
from roost.serve.servefile import load_serve_file
from tests.cli_inprocess import run_cli
from tests.serve.conftest import write_flows

if TYPE_CHECKING:
    from pathlib import Path


BAD_CRON = """\
schedules:
  morning:
    flow: hello.yaml
    cron: "61 9 * * *"
"""


@pytest.mark.parametrize("command", [["schedules", "list"], ["serve", "--port", "0"]])
def test_a_bad_cron_expression_is_one_located_line(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "serve.yaml").write_text(BAD_CRON)
    write_flows(tmp_path)
    done = run_cli(*command, "--config", "serve.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "serve.yaml:4:11: error: schedule 'morning': bad cron expression '61 9 * * *': "
        "[61 9 * * *] is not acceptable, out of range"
    ]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ('cron: "0 9 * *"', "serve.yaml:3:11: error: schedule 'm': bad cron expression '0 9 * *': "
         "4 fields; a cron expression has 5: minute hour day-of-month month day-of-week"),
        ("cron: '@daily'\n    timezone: Moon/Base", "serve.yaml:4:15: error: schedule 'm': "
         "unknown time zone 'Moon/Base' (an IANA name such as Europe/Paris, or UTC)"),
    ],
)  # fmt: skip
def test_a_bad_schedule_is_located(tmp_path: Path, entry: str, expected: str) -> None:
    (tmp_path / "serve.yaml").write_text(f"schedules:\n  m:\n    {entry}\n    flow: hello.yaml\n")
    with pytest.raises(FlowError) as caught:
        load_serve_file(tmp_path / "serve.yaml")
    assert str(caught.value).replace(str(tmp_path) + "/", "") == expected


def test_a_serve_file_that_is_no_mapping_is_refused_at_its_first_line(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text("- cron: '@daily'\n")
    with pytest.raises(FlowError) as caught:
        load_serve_file(tmp_path / "serve.yaml")
    assert str(caught.value).replace(str(tmp_path) + "/", "") == (
        "serve.yaml:1:1: error: a serve configuration is a mapping (schedules:), not a list"
    )
