"""Image bytes from a run file are checked like any image, and served only as images.

A run file's ``NAME.images/`` folder is anyone's. Before, ``roost import``
stored the bytes it found under the hash the event named, whatever they were,
with the event's media type: an HTML page under a PNG's hash, typed
``text/html``, which ``GET /images/{hash}`` then served as a page of the
server's own origin, cached for a year; and those first bytes kept the
genuine image out of the store for good. Now every put re-hashes the bytes
and checks their magic bytes, and the server serves only ``image/*``, with
``X-Content-Type-Options: nosniff``.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

import pytest

from roost.errors import ImageError
from roost.ports import MemoryImages
from roost.store.images import FolderImages, SqlImages, images_folder
from roost.store.sql import SqlStore
from tests.pictures import GIF, digest, png
from tests.serve.conftest import TOKEN, start_server

if TYPE_CHECKING:
    from pathlib import Path

    from roost.ports import ImageStore
    from tests.attacks.conftest import Cli

RED = png((200, 30, 30))
PAGE = b"<!doctype html><script>fetch('/runs').then(r => r.text()).then(alert)</script>"
LOOK = """\
roost: 1
name: look
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [red, again]}
agents:
  USER: {interrupt: ALWAYS}
  viewer: {role: v}
start: {from: USER, to: viewer, content: What is it?, images: [red.png]}
"""


def hostile_run_file(folder: Path, cli: Cli) -> Path:
    """A run file naming RED by its hash, whose images folder holds a page typed text/html."""
    (folder / "red.png").write_bytes(RED)
    (folder / "look.yaml").write_text(LOOK)
    run_file = folder / "run.jsonl"
    assert cli("run", "look.yaml", "--events", str(run_file), "--db", "made.db").code == 0
    lines = run_file.read_text().replace('"image/png"', '"text/html"')
    run_file.write_text(lines)
    (images_folder(run_file) / digest(RED).removeprefix("sha256:")).write_bytes(PAGE)
    return run_file


def stored_image(db: Path) -> tuple[str, bytes] | None:
    store = SqlStore(str(db))
    try:
        return SqlImages(store).find(digest(RED))
    finally:
        store.close()


def test_import_keeps_no_bytes_that_are_not_the_image_their_hash_names(
    tmp_path: Path, cli: Cli
) -> None:
    run_file = hostile_run_file(tmp_path, cli)
    said = cli("import", str(run_file), "--db", "runs.db")
    assert said.code == 0, said.err
    assert "1 of its images were not kept" in said.out
    assert stored_image(tmp_path / "runs.db") is None
    run_id = json.loads(run_file.read_text().splitlines()[0])["run"]
    assert cli("show", run_id, "--db", "runs.db").code == 0  # the run is there, without it
    # The genuine image, kept later under the same hash, is kept whole.
    assert cli("run", "look.yaml", "--db", "runs.db").code == 0
    assert stored_image(tmp_path / "runs.db") == ("image/png", RED)


@pytest.fixture(params=["memory", "folder", "sqlite"])
def images(request: pytest.FixtureRequest, tmp_path: Path) -> ImageStore:
    if request.param == "memory":
        return MemoryImages()
    if request.param == "folder":
        return FolderImages(tmp_path / "run.images")
    return SqlImages(SqlStore(str(tmp_path / "roost.db")))


def test_every_put_checks_the_hash_and_the_magic_bytes(images: ImageStore) -> None:
    with pytest.raises(ImageError, match="its bytes hash to"):
        images.put(digest(RED), "image/png", PAGE)
    with pytest.raises(ImageError, match="not a PNG, JPEG, GIF or WebP"):
        images.put(digest(PAGE), "text/html", PAGE)
    with pytest.raises(ImageError, match="its bytes are image/png, not 'text/html'"):
        images.put(digest(RED), "text/html", RED)
    assert images.get(digest(RED)) is None
    images.put(digest(RED), "image/png", RED)
    assert images.get(digest(RED)) == RED


def test_bytes_an_older_roost_kept_unchecked_give_way_to_the_genuine_image(
    tmp_path: Path,
) -> None:
    folder = FolderImages(tmp_path / "run.images")
    folder.folder.mkdir()
    (folder.folder / digest(RED).removeprefix("sha256:")).write_bytes(PAGE)
    folder.put(digest(RED), "image/png", RED)
    assert folder.get(digest(RED)) == RED
    db = tmp_path / "roost.db"
    store = SqlStore(str(db))
    SqlImages(store).put(digest(GIF), "image/gif", GIF)  # the table is made
    with sqlite3.connect(db) as connection:
        connection.execute(
            "INSERT INTO images VALUES (?, 'text/html', ?, ?)", (digest(RED), len(PAGE), PAGE)
        )
    SqlImages(store).put(digest(RED), "image/png", RED)
    assert SqlImages(store).find(digest(RED)) == ("image/png", RED)
    store.close()


def test_the_server_serves_an_image_only_as_what_its_bytes_are(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    store = SqlStore(str(db))
    SqlImages(store).put(digest(GIF), "image/gif", GIF)
    store.close()
    with sqlite3.connect(db) as connection:  # as an older roost's import left them
        connection.execute(
            "INSERT INTO images VALUES (?, 'text/html', ?, ?)", (digest(RED), len(PAGE), PAGE)
        )
        connection.execute(
            "INSERT INTO images VALUES (?, 'text/html', ?, ?)", (digest(PAGE), len(PAGE), PAGE)
        )
    server = start_server(tmp_path, db=str(db), token=TOKEN)
    try:
        api = server.client()
        gif = api.get(f"/images/{digest(GIF)}")
        assert gif.status_code == 200 and gif.content == GIF
        assert gif.headers["content-type"] == "image/gif"
        assert gif.headers["x-content-type-options"] == "nosniff"
        for poisoned in (digest(RED), digest(PAGE)):
            answer = api.get(f"/images/{poisoned}")
            assert answer.status_code == 404, answer.headers
            assert "text/html" not in answer.headers["content-type"]
    finally:
        server.stop()
