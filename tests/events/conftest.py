"""Logs roost wrote before an ``llm_call``'s response, usage and attempts were typed records."""

from __future__ import annotations

from pathlib import Path

# The engine's tests replay the same logs: they stay beside them.
DATA = Path(__file__).resolve().parents[1] / "engine" / "data"
LOGS = ["fallback_run.jsonl", "channel_run.jsonl"]


def lines(name: str) -> list[str]:
    return (DATA / name).read_text(encoding="utf-8").splitlines()
