"""Every example flow shipped in flows/ loads without errors, with no environment set.

Examples must work from a fresh clone, so any placeholder in them needs a default.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roost.flow import read_flow

FLOWS = Path(__file__).resolve().parents[2] / "flows"
EXAMPLES = sorted(p for p in FLOWS.rglob("*.yaml") if not p.name.endswith(".test.yaml"))


def test_there_are_example_flows() -> None:
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(FLOWS)))
def test_example_flow_is_valid(path: Path) -> None:
    flow = read_flow(path, environ={})
    assert flow.name
    assert all(w.severity == "warning" for w in flow.warnings)
