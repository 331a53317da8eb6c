"""The complete example in the flow-language reference is a valid flow."""

from __future__ import annotations

import re
from pathlib import Path

from roost.flow import load_flow_text

DOC = Path(__file__).resolve().parents[2] / "docs" / "flow-language.md"


def test_the_complete_example_in_the_docs_is_valid() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    complete = [b for b in blocks if b.startswith("# yaml-language-server") and "roost: 1" in b]
    assert len(complete) == 1
    flow = load_flow_text(complete[0], "example.yaml", environ={"OPENAI_API_KEY": "sk-doc"})
    assert flow.name == "math-team"
    assert flow.warnings == ()
