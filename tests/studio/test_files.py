"""A studio's flow files through a real ``roost studio``: created once, inside the folder only."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from roost.engine.flows import text_hash
from tests.studio.conftest import HELLO

if TYPE_CHECKING:
    from pathlib import Path

    from tests.serve.conftest import Server


def test_a_new_flow_is_written_from_json_once(studio: Server) -> None:
    flow = {"roost": 1, "name": "made", "agents": {"USER": {"role": "A person."}}}
    client = studio.client()
    got = client.post("/flows", json={"name": "made.yaml", "flow": flow})
    assert got.status_code == 201, got.text
    assert got.json()["flow"] == flow
    assert (studio.flows / "made.yaml").read_text().startswith("roost: 1\nname: made\n")
    again = client.post("/flows", json={"name": "made.yaml", "flow": {"roost": 1}})
    assert again.status_code == 409
    assert client.get("/flows/made.yaml").json()["flow"] == flow


def test_writes_stay_inside_the_folder(studio: Server, tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(HELLO)
    os.symlink(outside, studio.flows / "link.yaml")
    client = studio.client()
    ops = [{"op": "replace", "path": "/name", "value": "pwned"}]
    got = client.post("/flows/link.yaml/edits", json={"base": text_hash(HELLO), "ops": ops})
    assert got.status_code == 403
    assert client.get("/flows/link.yaml").status_code == 403
    os.symlink(tmp_path, studio.flows / "out")
    for name in ("../escape.yaml", "/tmp/abs.yaml", "link.yaml", "notes.txt", "out/new.yaml"):
        made = client.post("/flows", json={"name": name, "flow": {"roost": 1}})
        assert made.status_code in (403, 409), (name, made.text)
    assert outside.read_text() == HELLO
    assert not (studio.flows.parent / "escape.yaml").exists()
    assert not (tmp_path / "new.yaml").exists()
