"""The studio's edit API on a real ``roost studio`` process: read, edit, dry run, conflict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.engine.flows import text_hash
from tests.serve.conftest import start_server
from tests.studio.conftest import HELLO

if TYPE_CHECKING:
    from pathlib import Path

    from tests.serve.conftest import Server


def _fresh(studio: Server, name: str, text: str = HELLO) -> Path:
    path = studio.flows / name
    path.write_text(text)
    return path


def test_a_flow_reads_as_its_hash_text_json_and_problems(studio: Server) -> None:
    _fresh(studio, "read.yaml")
    got = studio.client().get("/flows/read.yaml")
    assert got.status_code == 200
    body = got.json()
    assert body["text"] == HELLO
    assert body["hash"] == text_hash(HELLO)
    assert body["flow"]["agents"]["bot"] == {"role": "You greet."}
    assert body["problems"] == []


def test_a_flow_with_problems_still_reads_with_them_located(studio: Server) -> None:
    _fresh(studio, "broken.yaml", HELLO.replace("to: bot", "to: nobody"))
    body = studio.client().get("/flows/broken.yaml").json()
    assert body["flow"]["start"]["to"] == "nobody"
    (problem,) = [p for p in body["problems"] if p["severity"] == "error"]
    assert problem["line"] == 16
    assert problem["column"] > 1
    assert "nobody" in problem["message"]


def test_an_edit_rewrites_only_its_lines_and_answers_the_new_state(studio: Server) -> None:
    path = _fresh(studio, "edit.yaml")
    ops = [
        {"op": "replace", "path": "/agents/bot/role", "value": "You greet warmly."},
        {"op": "add", "path": "/agents/critic", "value": {"role": "You judge."}},
    ]
    got = studio.client().post(
        "/flows/edit.yaml/edits", json={"base": text_hash(HELLO), "ops": ops}
    )
    assert got.status_code == 200, got.text
    expected = HELLO.replace("role: You greet.   # short", "role: You greet warmly.   # short")
    expected = expected.replace("start:", "  critic:\n    role: You judge.\nstart:")
    assert path.read_text() == expected
    body = got.json()
    assert body["text"] == expected
    assert body["hash"] == text_hash(expected)
    assert body["flow"]["agents"]["critic"] == {"role": "You judge."}


def test_a_dry_run_answers_without_writing(studio: Server) -> None:
    path = _fresh(studio, "dry.yaml")
    ops = [{"op": "remove", "path": "/description"}]
    ops = [{"op": "add", "path": "/description", "value": "Greets."}]
    got = studio.client().post(
        "/flows/dry.yaml/edits",
        params={"dry_run": "true"},
        json={"base": text_hash(HELLO), "ops": ops},
    )
    assert got.status_code == 200
    assert got.json()["flow"]["description"] == "Greets."
    assert "description: Greets.\n" in got.json()["text"]
    assert path.read_text() == HELLO


def test_a_file_changed_on_disk_is_a_conflict_and_nothing_is_written(studio: Server) -> None:
    path = _fresh(studio, "conflict.yaml")
    by_hand = HELLO.replace("You greet.", "You greet by hand.")
    path.write_text(by_hand)
    ops = [{"op": "replace", "path": "/name", "value": "other"}]
    got = studio.client().post(
        "/flows/conflict.yaml/edits", json={"base": text_hash(HELLO), "ops": ops}
    )
    assert got.status_code == 409
    assert got.json()["kind"] == "conflict"
    assert path.read_text() == by_hand


def test_an_op_that_cannot_apply_is_422_and_nothing_is_written(studio: Server) -> None:
    path = _fresh(studio, "bad-op.yaml")
    client = studio.client()
    for ops in (
        [{"op": "remove", "path": "/agents/nobody"}],
        [{"op": "replace", "path": "", "value": [1, 2]}],
        [{"op": "test", "path": "/name", "value": "other"}],
        [{"op": "jump", "path": "/name"}],
    ):
        got = client.post("/flows/bad-op.yaml/edits", json={"base": text_hash(HELLO), "ops": ops})
        assert got.status_code == 422, (ops, got.text)
        assert path.read_text() == HELLO


def test_another_sites_page_may_not_write(studio: Server) -> None:
    path = _fresh(studio, "origin.yaml")
    ops = [{"op": "replace", "path": "/name", "value": "evil"}]
    got = studio.client().post(
        "/flows/origin.yaml/edits",
        json={"base": text_hash(HELLO), "ops": ops},
        headers={"Origin": "http://evil.example"},
    )
    assert got.status_code == 403
    assert path.read_text() == HELLO


def test_a_plain_server_does_not_edit_flows(tmp_path: Path) -> None:
    flows = tmp_path / "flows"
    flows.mkdir()
    (flows / "hello.yaml").write_text(HELLO)
    server = start_server(tmp_path, flows=flows)
    try:
        ops = [{"op": "replace", "path": "/name", "value": "x"}]
        got = server.client().post(
            "/flows/hello.yaml/edits", json={"base": text_hash(HELLO), "ops": ops}
        )
        assert got.status_code in (404, 405)
        assert (flows / "hello.yaml").read_text() == HELLO
        # Nor is a flow read at /flows/graph, which still asks which flow to draw.
        drawing = server.client().get("/flows/graph")
        assert drawing.status_code == 422
        assert drawing.json() == {"error": "query.flow: field required", "kind": "invalid_request"}
        assert 'id="studio"' not in server.client().get("/").text  # the page has no studio
    finally:
        server.stop()
