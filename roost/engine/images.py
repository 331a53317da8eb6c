"""Images in messages: reading them, checking them, keeping them by hash, giving them back.

An image comes from a file (``--image PATH``, or a path in the flow's
``start.images``, relative to the flow's folder) or from an ``http(s)`` URL in
``start.images``, which roost fetches once: every image is kept in the run's
image store by the SHA-256 of its bytes, and the message event names it by
that hash, so a run's log and store hold everything its requests were built
from, and a replay builds them again from the store.

An image is checked before anything is recorded: it must exist, be at most
``MAX_IMAGE_BYTES``, and be a PNG, JPEG, GIF or WebP by its magic bytes
(``filetype``), the formats every supported API takes.
"""

from __future__ import annotations

import asyncio
import base64
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from roost.errors import EventLogError, FlowError, ImageError
from roost.events import ImageRecord
from roost.flow.models import flow_folder
from roost.messages import ImagePart
from roost.ports import IMAGE_TYPES

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from roost.flow.models import Flow
    from roost.nodes.agent import ImageSource
    from roost.ports import ImageStore

# The lowest limit of the supported APIs (Anthropic's 5 MB an image); OpenAI takes more.
MAX_IMAGE_BYTES = 5 * 1000 * 1000
FETCH_TIMEOUT = 30.0  # seconds for a URL's whole download, however its bytes arrive


@dataclass(frozen=True, slots=True)
class LoadedImage:
    """An image read and checked, not yet kept: its ``name`` for people, type and bytes."""

    name: str
    media_type: str
    data: bytes

    @property
    def digest(self) -> str:
        return "sha256:" + sha256(self.data).hexdigest()

    def record(self) -> ImageRecord:
        return ImageRecord(hash=self.digest, media_type=self.media_type, name=self.name)


def is_url(ref: str) -> bool:
    return ref.startswith(("http://", "https://"))


def load_image(ref: str, folder: Path | None = None) -> LoadedImage:
    """The image at ``ref``: a URL, or a file path (relative to ``folder`` when given).

    Raises ImageError, naming ``ref``, when it cannot be read or is not an image roost sends.
    """
    if is_url(ref):
        return checked(shown_url(ref), _fetch(ref))
    path = Path(ref).expanduser()
    if folder is not None and not path.is_absolute():
        path = folder / path
    if not path.is_file():
        why = "not a file" if path.exists() else "no such image file"
        raise ImageError(f"{ref}: {why}")
    try:
        with path.open("rb") as file:
            data = file.read(MAX_IMAGE_BYTES + 1)
    except OSError as exc:
        raise ImageError(f"{ref}: cannot be read ({exc.strerror or exc})") from None
    return checked(path.name, data, ref)


def checked(name: str, data: bytes, shown: str | None = None) -> LoadedImage:
    """``data`` as an image called ``name``; ImageError when too large or not an image."""
    import filetype  # magic bytes only; loaded when an image is

    where = shown or name
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(f"{where}: over the image size limit of {MAX_IMAGE_BYTES:,} bytes")
    kind = filetype.guess(data[:8192])
    if kind is None or kind.mime not in IMAGE_TYPES:
        found = f"it looks like {kind.mime}" if kind is not None else "its bytes are no known type"
        raise ImageError(f"{where}: not a PNG, JPEG, GIF or WebP image ({found})")
    return LoadedImage(name, kind.mime, data)


def load_images(refs: Iterable[str], folder: Path | None = None) -> list[LoadedImage]:
    """Every image of ``refs`` loaded and checked (the first bad one raises ImageError)."""
    return [load_image(ref, folder) for ref in refs]


def start_images(flow: Flow) -> list[LoadedImage]:
    """The images of the flow's ``start.images``, paths relative to the flow's folder.

    Raises FlowError, located at the entry, for the first that cannot be used.
    """
    refs = flow.start.images if flow.start is not None else []
    if not refs:
        return []
    folder = flow_folder(flow)
    loaded = []
    for index, ref in enumerate(refs):
        try:
            loaded.append(load_image(ref, folder))
        except ImageError as error:
            problem = flow.problem(("start", "images", index), f"start.images[{index}]: {error}")
            raise FlowError([problem]) from None
    return loaded


def keep(store: ImageStore, images: Sequence[LoadedImage]) -> tuple[ImageRecord, ...]:
    """Puts ``images`` in ``store`` (one copy of each) and gives their records."""
    for image in images:
        store.put(image.digest, image.media_type, image.data)
    return tuple(image.record() for image in images)


def image_source(store: ImageStore) -> ImageSource:
    """Gives a message's image from ``store``, each read once; EventLogError when missing."""
    read: dict[str, ImagePart] = {}

    def source(record: ImageRecord) -> ImagePart:
        part = read.get(record.hash)
        if part is None:
            data = store.get(record.hash)
            if data is None:
                raise EventLogError(
                    f"image {record.hash} ({record.name or record.media_type}) is not in the "
                    "run's image store"
                )
            encoded = base64.b64encode(data).decode("ascii")
            part = read[record.hash] = ImagePart(
                media_type=record.media_type, data=encoded, hash=record.hash
            )
        return part

    return source


def shown_url(url: str) -> str:
    """``url`` as a message's record names it: no user, password, query or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _fetch(url: str) -> bytes:
    """The body at ``url`` (at most one byte over the limit); ImageError when it fails.

    ``FETCH_TIMEOUT`` bounds the whole download, not each read: a server that
    trickles a byte now and then is cut off all the same. Runs its own event loop
    (a download is made in a worker thread: see ``start_images_async``).
    """
    return asyncio.run(_download(url, FETCH_TIMEOUT))


async def _download(url: str, seconds: float) -> bytes:
    import httpx2

    shown = shown_url(url)
    try:
        async with (
            asyncio.timeout(seconds),
            httpx2.AsyncClient(timeout=seconds) as client,
            client.stream("GET", url, follow_redirects=True) as answer,
        ):
            if answer.status_code != 200:
                raise ImageError(f"{shown}: the server answered HTTP {answer.status_code}")
            data = bytearray()
            async for chunk in answer.aiter_bytes():
                data += chunk
                if len(data) > MAX_IMAGE_BYTES:
                    break
            return bytes(data)
    except TimeoutError:
        raise ImageError(f"{shown}: not fetched within {seconds:g} s") from None
    except httpx2.HTTPError as exc:
        raise ImageError(f"{shown}: cannot be fetched ({type(exc).__name__})") from None


async def start_images_async(flow: Flow) -> list[LoadedImage]:
    """``start_images`` off the event loop: a flow whose start images include a URL reads
    them in the downloads' own bounded pool, so that slow servers never hold up the
    threads every other run (and the server) works in."""
    refs = flow.start.images if flow.start is not None else []
    loop = asyncio.get_running_loop()
    if any(is_url(ref) for ref in refs):
        return await loop.run_in_executor(_downloads(), start_images, flow)
    return await asyncio.to_thread(start_images, flow)


@cache
def _downloads() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(DOWNLOADS, thread_name_prefix="roost-image-download")


DOWNLOADS = 8  # image downloads at once in one process; more wait for a free one
