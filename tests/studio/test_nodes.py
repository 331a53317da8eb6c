"""A node renamed or removed everywhere the flow names it, and the page's whole-text edits."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from roost.engine.flows import text_hash
from roost.studio.nodes import NodeError, delete_ops, rename_ops
from roost.studio.roundtrip import edit_text, place_of, places, read_json

if TYPE_CHECKING:
    from pathlib import Path

    from tests.serve.conftest import Server

TEAM = """\
# A team, written by hand.
roost: 1
name: team   # its name
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies: ["Draft.", "TERMINATE"]   # two replies

# who speaks
agents:
  USER: {role: A person.}
  writer:
    role: You write.   # short
  critic:
    role: You check.
    reply_format: {type: object, properties: {verdict: {enum: [ok, redo]}}}
channels:
  desk:
    members: [writer, critic]   # in order
    director: {strategy: round_robin}
    transitions:
      writer: [critic]
      critic:
        - to: writer   # back
          when: {field: verdict, equals: redo}
        - to: TERMINATE
  side:
    members:
      - critic
      - writer
start: {from: USER, to: desk, content: Go}
"""


def _lines_changed(before: str, after: str) -> list[tuple[str, str]]:
    return [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]


def test_a_rename_reaches_members_transitions_routes_and_start_in_place() -> None:
    renamed = edit_text(TEAM, rename_ops(read_json(TEAM), "writer", "author"))
    assert renamed == TEAM.replace("writer", "author")  # every place, and nothing else


def test_a_channel_rename_reaches_start() -> None:
    renamed = edit_text(TEAM, rename_ops(read_json(TEAM), "desk", "room"))
    assert _lines_changed(TEAM, renamed) == [
        ("  desk:", "  room:"),
        (
            "start: {from: USER, to: desk, content: Go}",
            "start: {from: USER, to: room, content: Go}",
        ),
    ]


def test_a_rename_to_a_taken_or_bad_name_or_of_nothing_is_refused() -> None:
    flow = read_json(TEAM)
    with pytest.raises(NodeError, match="'critic' is in the flow already"):
        rename_ops(flow, "writer", "critic")
    with pytest.raises(NodeError, match="not a node name"):
        rename_ops(flow, "writer", "two words")
    with pytest.raises(NodeError, match="no node 'nobody'"):
        rename_ops(flow, "nobody", "x")


def test_a_removal_takes_the_node_out_of_members_and_transitions() -> None:
    removed = read_json(edit_text(TEAM, delete_ops(read_json(TEAM), "writer")))
    assert "writer" not in removed["agents"]
    assert removed["channels"]["desk"]["members"] == ["critic"]
    assert removed["channels"]["side"]["members"] == ["critic"]
    assert removed["channels"]["desk"]["transitions"] == {"critic": [{"to": "TERMINATE"}]}
    assert removed["start"] == {"from": "USER", "to": "desk", "content": "Go"}


def test_a_problem_is_placed_at_the_key_its_line_and_column_fall_in() -> None:
    found = places(TEAM)
    assert place_of(found, 14, 5) == "/agents/writer/role"
    assert place_of(found, 14, 20) == "/agents/writer/role"
    assert place_of(found, 20, 15) == "/channels/desk/members/0"
    assert place_of(found, 1, 1) is None


# ---------------------------------------------------------------- over HTTP


def _fresh(studio: Server, name: str, text: str = TEAM) -> Path:
    path = studio.flows / name
    path.write_text(text)
    return path


def test_the_rename_route_writes_every_reference_and_answers_its_ops(studio: Server) -> None:
    path = _fresh(studio, "rename.yaml")
    body = {"base": text_hash(TEAM), "node": "critic", "to": "judge"}
    got = studio.client().post("/flows/rename.yaml/rename", json=body)
    assert got.status_code == 200, got.text
    # A flow sequence's end-of-line comment keeps its column: the one line that changed.
    expected = TEAM.replace("critic", "judge").replace("judge]   #", "judge]    #")
    assert path.read_text() == expected
    assert got.json()["ops"][0] == {"op": "move", "from": "/agents/critic", "path": "/agents/judge"}
    assert got.json()["problems"] == []


def test_a_rename_on_an_old_hash_is_a_conflict_and_writes_nothing(studio: Server) -> None:
    path = _fresh(studio, "stale.yaml")
    body = {"base": text_hash(TEAM.replace("Go", "Went")), "node": "critic", "to": "judge"}
    got = studio.client().post("/flows/stale.yaml/rename", json=body)
    assert got.status_code == 409
    assert got.json()["kind"] == "conflict"
    assert path.read_text() == TEAM


def test_a_bad_rename_or_removal_is_one_422_line(studio: Server) -> None:
    path = _fresh(studio, "bad.yaml")
    client = studio.client()
    got = client.post(
        "/flows/bad.yaml/rename", json={"base": text_hash(TEAM), "node": "writer", "to": "critic"}
    )
    assert got.status_code == 422
    assert got.json() == {"error": "a node 'critic' is in the flow already", "kind": "invalid_edit"}
    got = client.post("/flows/bad.yaml/delete", json={"base": text_hash(TEAM), "node": "ghost"})
    assert got.status_code == 422
    assert "no node 'ghost'" in got.json()["error"]
    assert path.read_text() == TEAM


def test_the_delete_route_leaves_a_start_naming_it_as_a_problem(studio: Server) -> None:
    path = _fresh(studio, "delete.yaml")
    got = studio.client().post(
        "/flows/delete.yaml/delete", json={"base": text_hash(TEAM), "node": "desk"}
    )
    assert got.status_code == 200, got.text
    assert "  desk:" not in path.read_text()
    errors = [p for p in got.json()["problems"] if p["severity"] == "error"]
    assert [p["path"] for p in errors] == ["/start/to"]


def test_a_whole_text_is_written_as_given_and_a_dry_run_only_checks_it(studio: Server) -> None:
    path = _fresh(studio, "text.yaml")
    client = studio.client()
    typed = TEAM.replace("to: desk,", "to: nowhere,") + "# a last comment\n"
    checked = client.post(
        "/flows/text.yaml/edits?dry_run=true", json={"base": text_hash(TEAM), "text": typed}
    )
    assert checked.status_code == 200
    errors = [p for p in checked.json()["problems"] if p["severity"] == "error"]
    assert [p["path"] for p in errors] == ["/start/to"]
    assert path.read_text() == TEAM
    written = client.post("/flows/text.yaml/edits", json={"base": text_hash(TEAM), "text": typed})
    assert written.status_code == 200
    assert path.read_text() == typed
    both = client.post(
        "/flows/text.yaml/edits",
        json={"base": text_hash(typed), "text": TEAM, "ops": [{"op": "remove", "path": "/name"}]},
    )
    assert both.status_code == 422
    assert path.read_text() == typed


def test_a_flow_named_graph_reads_in_the_studio_and_the_drawing_still_draws(
    studio: Server,
) -> None:
    _fresh(studio, "real.yaml")
    os.symlink("real.yaml", studio.flows / "graph")
    client = studio.client()
    read = client.get("/flows/graph")
    assert read.status_code == 200, read.text
    assert read.json()["text"] == TEAM
    drawn = client.get("/flows/graph", params={"flow": "real.yaml"})
    assert drawn.status_code == 200
    assert "<svg" in drawn.json()["svg"]
