"""Where images are kept, for every backend: by hash, once, and read back as they were."""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import create_engine, text

from roost.errors import StoreError
from roost.ports import LayeredImages
from roost.store.images import FolderImages, SqlImages, images_of
from roost.store.jsonl import JsonlLog
from roost.store.sql import SqlStore
from roost.store.tee import TeeLog
from tests.cli_inprocess import run_cli
from tests.pictures import GIF, digest, png

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from roost.ports import ImageStore

RED = png((200, 30, 30))


@pytest.fixture(params=["folder", "sqlite", "postgresql"])
def images(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ImageStore]:
    if request.param == "folder":
        yield FolderImages(tmp_path / "run.images")
        return
    url = (
        str(tmp_path / "roost.db")
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    store = SqlStore(url)
    yield SqlImages(store)
    store.close()


def count(images: ImageStore) -> int:
    if isinstance(images, FolderImages):
        return len(list(images.folder.iterdir()))
    assert isinstance(images, SqlImages)
    engine = images._store.engine  # the same database, read as a person would
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT count(*) FROM images")).scalar_one())


def test_an_image_is_kept_once_by_its_hash_and_read_back(images: ImageStore) -> None:
    assert images.get(digest(RED)) is None
    images.put(digest(RED), "image/png", RED)
    images.put(digest(RED), "image/png", RED)  # the same picture again
    images.put(digest(GIF), "image/gif", GIF)
    assert images.get(digest(RED)) == RED and images.get(digest(GIF)) == GIF
    assert count(images) == 2


def test_two_writers_of_one_image_keep_one_copy(images: ImageStore) -> None:
    failures: list[BaseException] = []

    def put() -> None:
        try:
            images.put(digest(RED), "image/png", RED)
        except BaseException as error:
            failures.append(error)

    writers = [threading.Thread(target=put) for _ in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert failures == []
    assert images.get(digest(RED)) == RED and count(images) == 1


def test_a_hash_that_is_not_one_never_names_a_file(images: ImageStore, tmp_path: Path) -> None:
    (tmp_path / "secret").write_bytes(b"not yours")
    for bad in ("../secret", "sha256:../../secret", "sha256:" + "G" * 64, ""):
        assert images.get(bad) is None
        with pytest.raises(StoreError, match="is not an image hash"):
            images.put(bad, "image/png", RED)


def test_a_run_file_and_its_stored_copy_both_keep_the_images(tmp_path: Path) -> None:
    store = SqlStore(str(tmp_path / "roost.db"))
    log = TeeLog(store.new_log("run-1"), [JsonlLog(tmp_path / "run.jsonl", "run-1")])
    images = images_of(log)
    assert isinstance(images, LayeredImages)
    images.put(digest(RED), "image/png", RED)
    assert SqlImages(store).get(digest(RED)) == RED
    assert FolderImages(tmp_path / "run.images").get(digest(RED)) == RED
    assert isinstance(images_of(JsonlLog(tmp_path / "other.jsonl", "run-2")), FolderImages)
    store.close()


def test_import_keeps_the_images_of_the_run_file(tmp_path: Path) -> None:
    (tmp_path / "red.png").write_bytes(RED)
    (tmp_path / "look.yaml").write_text(
        "roost: 1\nname: look\ndefaults: {provider: mock}\n"
        "providers:\n  mock: {kind: scripted, replies: [red]}\n"
        "agents:\n  USER: {interrupt: ALWAYS}\n  viewer: {role: v}\n"
        "start: {from: USER, to: viewer, content: What is it?, images: [red.png]}\n"
    )
    events = tmp_path / "run.jsonl"
    done = run_cli("run", "look.yaml", "--events", str(events), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    other = tmp_path / "other.db"
    done = run_cli("import", str(events), "--db", str(other), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(other) as connection:
        rows = list(connection.execute("SELECT hash, media_type, data FROM images"))
    assert rows == [(digest(RED), "image/png", RED)]
    run_id = json.loads(events.read_text().splitlines()[0])["run"]
    replayed = run_cli("replay", run_id, "--db", str(other), cwd=tmp_path)
    assert replayed.returncode == 0 and "identical" in replayed.stdout


def test_a_store_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    url = str(tmp_path / "roost.db")
    store = SqlStore(url)
    images = SqlImages(store)
    images.put(digest(GIF), "image/gif", GIF)  # the table is made
    engine = create_engine(f"sqlite:///{url}")
    with engine.begin() as connection:  # what another program may do to the database
        connection.execute(text("DROP TABLE images"))
        connection.execute(text("CREATE TABLE images (hash TEXT PRIMARY KEY)"))
    engine.dispose()
    with pytest.raises(StoreError) as raised:
        images.put(digest(RED), "image/png", RED)
    assert "cannot" in str(raised.value) and "\n" not in str(raised.value)
    store.close()
