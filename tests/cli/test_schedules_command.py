"""``roost schedules list``: when each schedule of a serve configuration fires next."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from tests.cli_inprocess import run_cli

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


SERVE_YAML = """\
schedules:
  morning:
    cron: "0 9 * * 1-5"
    flow: hello.yaml
    message: Good morning.
    timezone: Europe/Paris
  minutely:
    cron: "* * * * *"
    flow: hello.yaml
"""


def test_schedules_list_shows_the_next_fire_times(tmp_path: Path) -> None:
    (tmp_path / "serve.yaml").write_text(SERVE_YAML)
    env = {"ROOST_SCHEDULE_NOW": "2026-01-02T08:30:00Z"}  # a Friday
    done = run_cli("schedules", "list", "--next", "2", cwd=tmp_path, env=env)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == [
        "SCHEDULE  CRON         TIME ZONE     FLOW        NEXT",
        "morning   0 9 * * 1-5  Europe/Paris  hello.yaml  "
        "2026-01-05T09:00:00+01:00, 2026-01-06T09:00:00+01:00",
        "minutely  * * * * *    UTC           hello.yaml  "
        "2026-01-02T08:31:00+00:00, 2026-01-02T08:32:00+00:00",
    ]


def test_without_croniter_the_command_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "serve.yaml").write_text(SERVE_YAML)
    monkeypatch.setitem(sys.modules, "croniter", None)  # importing it fails: not installed
    for name in ("roost.serve.servefile", "roost.serve.scheduler"):
        monkeypatch.delitem(sys.modules, name, raising=False)  # imported afresh, and failing
    done = run_cli("schedules", "list", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "serve.yaml: schedules need the cron library croniter, which roost installs with it: "
        "pip install croniter\n",
    )
