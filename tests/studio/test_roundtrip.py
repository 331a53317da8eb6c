"""The round-trip writer on small flows, each edit compared with the exact text expected."""

from __future__ import annotations

import pytest

from roost.studio.roundtrip import EditError, edit_text, new_text, read_json

FLOW = """\
# yaml-language-server: $schema=../roost.schema.json
roost: 1
name: "quoted"   # a name
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies:
      - 'one'
      - "two"

# the people
agents:
  USER: {role: A person.}
  bot:
    role: You help ${WHO}.   # short
    tools: &tools [builtin#now]
  twin:
    role: A twin.
    tools: *tools

# how it starts
start: {from: USER, to: bot}
"""


def _edit(*ops: dict[str, object]) -> str:
    return edit_text(FLOW, list(ops))


def test_a_replaced_string_keeps_its_quotes_and_its_comment_gap() -> None:
    edited = _edit({"op": "replace", "path": "/name", "value": "renamed"})
    assert edited == FLOW.replace('name: "quoted"   # a name', 'name: "renamed"   # a name')
    edited = _edit({"op": "replace", "path": "/providers/mock/replies/0", "value": "uno"})
    assert edited == FLOW.replace("- 'one'", "- 'uno'")


def test_a_new_key_goes_after_its_siblings_in_their_style() -> None:
    edited = _edit({"op": "add", "path": "/defaults/max_turns", "value": 4})
    assert edited == FLOW.replace("{provider: mock}", "{provider: mock, max_turns: 4}")
    edited = _edit({"op": "add", "path": "/agents/twin/markers", "value": ["END"]})
    assert edited == FLOW.replace(
        "    tools: *tools\n", "    tools: *tools\n    markers:\n      - END\n"
    )


def test_the_last_items_comments_stay_before_what_followed() -> None:
    edited = _edit({"op": "add", "path": "/providers/mock/replies/-", "value": "three"})
    assert edited == FLOW.replace('      - "two"\n', '      - "two"\n      - three\n')
    edited = _edit({"op": "remove", "path": "/agents/twin"})
    assert edited == FLOW.replace("  twin:\n    role: A twin.\n    tools: *tools\n", "")


def test_placeholders_stay_as_written() -> None:
    assert read_json(FLOW)["agents"]["bot"]["role"] == "You help ${WHO}."
    edited = _edit({"op": "replace", "path": "/agents/bot/tools/0", "value": "builtin#http_get"})
    assert "You help ${WHO}." in edited
    assert "tools: &tools [builtin#http_get]" in edited
    assert read_json(edited)["agents"]["twin"]["tools"] == ["builtin#now"]


def test_an_edit_that_cannot_apply_names_its_operation() -> None:
    with pytest.raises(EditError, match=r"ops\[1\] \(remove /agents/nobody\)"):
        _edit(
            {"op": "test", "path": "/roost", "value": 1}, {"op": "remove", "path": "/agents/nobody"}
        )


def test_a_new_flow_is_written_in_block_style() -> None:
    assert new_text({"roost": 1, "agents": {"a": {"role": "R."}}}) == (
        "roost: 1\nagents:\n  a:\n    role: R.\n"
    )
