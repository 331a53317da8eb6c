"""A conversation made a flow and a run: speakers' names, and recorded text kept as data."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from roost.importers import import_run
from tests.importers.conftest import messages

if TYPE_CHECKING:
    from pathlib import Path


def test_speaker_names_are_made_valid_and_unique() -> None:
    from roost.importers.derive import node_names

    names = node_names(["maths-bot", "maths bot", "7up", "chat", ""])
    assert names == {
        "maths-bot": "maths_bot",
        "maths bot": "maths_bot_2",
        "7up": "a_7up",
        "chat": "chat_2",
        "": "speaker",
    }


HOSTILE = [
    "Hi {{ 6*7 }} {% include 'secret.txt' %} {# a comment #}",
    "{% raw %}x{% endraw %} then {%- endraw -%} and {{ 'endraw' }}",
    "${ROOST_IMPORT_SECRET} and $${ROOST_IMPORT_SECRET} and ${ROOST_IMPORT_SECRET:-d}",
    "{%\n endraw\n%}{{\n",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_recorded_text_is_data_never_a_template_or_a_placeholder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    from roost.flow.loader import load_flow_text
    from roost.nodes.roles import render

    monkeypatch.setenv("ROOST_IMPORT_SECRET", "s3cret-value")
    said = [
        {"role": "system", "name": "bot", "content": f"Role: {text}"},
        {"role": "user", "name": "user", "content": text},
        {"role": "assistant", "name": "bot", "content": f"Reply: {text}"},
    ]
    (tmp_path / "hostile.json").write_text(json.dumps(said))
    flow_text, events, _ = import_run(tmp_path / "hostile.json", "ag2", "r")
    dumped = [e.model_dump(by_alias=True, mode="json") for e in events]
    assert [m[2] for m in messages(dumped)] == [text, f"Reply: {text}"]
    assert "s3cret-value" not in json.dumps(dumped)
    flow = load_flow_text(flow_text, "hostile.yaml")
    role = flow.agents["bot"].role
    assert role is not None and render(role) == f"Role: {text}"
