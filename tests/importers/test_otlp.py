"""``roost export --to otel``: a run as OTLP JSON, which imports back as the same conversation."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.importers.conftest import events_of, events_of_path, imported, messages, roost

if TYPE_CHECKING:
    from pathlib import Path


def test_export_to_otel_and_back_gives_the_same_conversation(tmp_path: Path) -> None:
    run_id = imported(tmp_path, "agentchat_tools.json", "agentchat")
    exported = roost(tmp_path, "export", run_id, "--to", "otel")
    assert exported.returncode == 0
    document = json.loads(exported.stdout)
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert any(s["name"].startswith("chat") for s in spans)
    (tmp_path / "spans.json").write_text(exported.stdout)
    back = messages(events_of_path(tmp_path / "spans.json", "otel"))
    assert back == messages(events_of("agentchat_tools.json", "agentchat"))
