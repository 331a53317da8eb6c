"""``roost serve`` as a user starts it: a configuration it refuses, in located lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.cli_inprocess import run_cli
from tests.serve.conftest import write_flows

if TYPE_CHECKING:
    from pathlib import Path


def test_serve_refuses_a_schedule_of_a_missing_flow_or_an_unknown_var(tmp_path: Path) -> None:
    write_flows(tmp_path / "flows")
    (tmp_path / "serve.yaml").write_text(
        "schedules:\n"
        "  a: {cron: '* * * * *', flow: nowhere.yaml}\n"
        "  b: {cron: '* * * * *', flow: hello.yaml, vars: {colour: red}}\n"
    )
    done = run_cli("serve", "--flows", "flows", "--config", "serve.yaml", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert [line.split(": error: ")[0] for line in lines] == ["serve.yaml:2:32", "serve.yaml:3:51"]
    assert "nowhere.yaml" in lines[0]
    assert "unknown var 'colour' of flow hello.yaml" in lines[1]
