"""Where the images of messages are kept: a table of the SQL store, or a folder beside a run file.

Both are keyed by the image's content hash (``sha256:<hex>``), so the same
image sent twice, in one run or in many, is kept once. The table
``images`` (hash, media type, size, bytes) is made the first time an image is
kept. A run's JSON Lines file ``NAME.jsonl`` keeps its images in the folder
``NAME.images/`` beside it, one file per image named by its hex digest, so that
the file and its folder can be moved together.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Column, Integer, LargeBinary, String, Table, delete, insert, select
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from roost.errors import ImageError, StoreError
from roost.ports import (
    EventLog,
    ImageStore,
    LayeredImages,
    MemoryImages,
    checked_image,
    verified_type,
)
from roost.store.forks import FileFork
from roost.store.jsonl import JsonlLog
from roost.store.schema import METADATA
from roost.store.sqllog import SqlLog
from roost.store.tee import TeeLog

if TYPE_CHECKING:
    from collections.abc import Iterable

    from roost.events import Event
    from roost.store.schema import Database

_DIGEST = re.compile(r"sha256:([0-9a-f]{64})")


# One image, by the SHA-256 of its bytes (a Core table, as the store's others are).
IMAGES = Table(
    "images",
    METADATA,
    Column("hash", String(80), primary_key=True),
    Column("media_type", String(64), nullable=False),
    Column("size", Integer, nullable=False),
    Column("data", LargeBinary, nullable=False),
)


def hex_of(digest: str) -> str:
    """The hex part of ``sha256:<hex>``; StoreError for anything else (never a path)."""
    found = _DIGEST.fullmatch(digest)
    if found is None:
        raise StoreError(f"{digest!r} is not an image hash (sha256:<64 hex digits>)")
    return found.group(1)


class SqlImages:
    """The ``ImageStore`` of a run store (any database SQLAlchemy speaks)."""

    def __init__(self, store: Database) -> None:
        self._store = store
        self._made = False

    def put(self, digest: str, media_type: str, data: bytes) -> None:
        hex_of(digest)
        checked_image(digest, media_type, data)
        kept = self.find(digest)
        if kept is not None and verified_type(digest, kept[1]) == kept[0]:
            return  # the same bytes, by their hash: kept once
        row = {"hash": digest, "media_type": media_type, "size": len(data), "data": data}
        try:
            with self._store.translate("keep an image"), self._store.engine.begin() as conn:
                if kept is not None:  # bytes an older roost kept unchecked: replaced
                    conn.execute(delete(IMAGES).where(IMAGES.c.hash == digest))
                conn.execute(insert(IMAGES).values(row))
        except StoreError as error:
            if not isinstance(error.__cause__, IntegrityError):
                raise  # another process kept the same image just now: fine; anything else fails

    def get(self, digest: str) -> bytes | None:
        found = self.find(digest)
        return found[1] if found is not None else None

    def find(self, digest: str) -> tuple[str, bytes] | None:
        """The media type and bytes of the image ``digest``, or None."""
        if _DIGEST.fullmatch(digest) is None:
            return None
        self._make()
        query = select(IMAGES.c.media_type, IMAGES.c.data).where(IMAGES.c.hash == digest)
        with self._store.translate("read an image"), self._store.engine.connect() as conn:
            row = conn.execute(query).first()
        return (str(row[0]), bytes(row[1])) if row is not None else None

    def _make(self) -> None:
        """The table, made once per process (two processes making it at once: one wins)."""
        if self._made:
            return
        with self._store.translate("prepare images"):
            try:
                METADATA.create_all(self._store.engine, tables=[IMAGES])
            except SQLAlchemyError:
                METADATA.create_all(self._store.engine, tables=[IMAGES])
        self._made = True


def images_folder(run_file: Path) -> Path:
    """The folder that keeps the images of the run in ``run_file``: ``NAME.images/``."""
    return run_file.with_name(run_file.stem + ".images")


class FolderImages:
    """The ``ImageStore`` of a JSON Lines run: one file per image in a folder beside it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def put(self, digest: str, media_type: str, data: bytes) -> None:
        path = self.folder / hex_of(digest)
        checked_image(digest, media_type, data)
        if path.is_file() and verified_type(digest, self._read(path)):
            return  # the same bytes, by their hash: kept once (other bytes are replaced)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # A name of its own for each writer (threads of one process share a pid).
            handle, name = tempfile.mkstemp(dir=self.folder, prefix=f".{path.name}.")
            partial = Path(name)
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            partial.replace(path)  # whole or not at all, for a reader at the same moment
        except OSError as exc:
            why = exc.strerror or exc
            raise StoreError(f"{self.folder}: cannot keep an image ({why})") from exc

    def get(self, digest: str) -> bytes | None:
        if _DIGEST.fullmatch(digest) is None:
            return None
        try:
            return self._read(self.folder / hex_of(digest))
        except FileNotFoundError:
            return None

    def _read(self, path: Path) -> bytes:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise
        except OSError as exc:
            why = exc.strerror or exc
            raise StoreError(f"{self.folder}: cannot read an image ({why})") from exc


def images_of(log: EventLog) -> ImageStore:
    """Where the run of ``log`` keeps its images: the store of each of its copies.

    A stored run keeps them in its store's table, a run file in its folder; a run
    written to both keeps each image in both and reads it from its primary first.
    """
    parts: list[Any] = [log.primary, *log.copies] if isinstance(log, TeeLog) else [log]
    if isinstance(log, FileFork):  # a fork of a run file: its own file, and its stored twin
        parts = [log.path, log.stored]
    stores: list[ImageStore] = []
    for part in parts:
        if isinstance(part, JsonlLog | Path):
            path = part.path if isinstance(part, JsonlLog) else part
            stores.append(FolderImages(images_folder(path)))
        elif isinstance(part, SqlLog):
            stores.append(SqlImages(part.store))
    if not stores:
        return MemoryImages()
    return stores[0] if len(stores) == 1 else LayeredImages(stores)


def copy_images(events: Iterable[Event], source: ImageStore, target: ImageStore) -> list[str]:
    """Keeps in ``target`` each image ``events`` name that ``source`` holds; the hashes of
    those it does not hold."""
    missing: list[str] = []
    seen: set[str] = set()
    for event in events:
        for image in getattr(event, "images", None) or ():
            if image.hash in seen:
                continue
            seen.add(image.hash)
            data = source.get(image.hash)
            if data is None or not _kept(target, image.hash, image.media_type, data):
                missing.append(image.hash)
    return missing


def _kept(target: ImageStore, digest: str, media_type: str, data: bytes) -> bool:
    """Keeps the image in ``target``; False when its bytes are not that image (not kept)."""
    try:
        target.put(digest, media_type, data)
    except ImageError:
        return False
    return True
