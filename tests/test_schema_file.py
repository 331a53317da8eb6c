"""The committed roost.schema.json (which the example flows point editors at) is current."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_inprocess import run_cli

ROOT = Path(__file__).resolve().parent.parent


def test_committed_schema_matches_roost_schema() -> None:
    done = run_cli("schema", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    printed = done.stdout
    committed = (ROOT / "roost.schema.json").read_text()
    assert json.loads(committed) == json.loads(printed), "run: roost schema > roost.schema.json"


def test_every_example_flow_points_at_the_schema() -> None:
    flows = sorted(p for p in (ROOT / "flows").rglob("*.yaml") if not p.name.endswith(".test.yaml"))
    assert flows
    for flow in flows:
        first = flow.read_text().splitlines()[0]
        assert first.startswith("# yaml-language-server: $schema="), flow
        target = (flow.parent / first.split("$schema=", 1)[1]).resolve()
        assert target == ROOT / "roost.schema.json", flow
