"""Where a run's events go: the small interface every log backend satisfies.

The engine appends the events of one step together (no model, tool or person
is awaited between them) and each backend makes that batch durable as a unit:
the JSON Lines file flushes it, the SQL store commits it in one transaction.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime
from hashlib import sha256
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from roost.errors import ConcurrentRunError, ImageError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.events import Event, MemoryEntry, TimelineEntry


_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The words of ``text``, lower-cased, in order: what a memory search matches by
    (punctuation, quotes and operators are never syntax), and what tools are ranked by."""
    return _WORD.findall(text.lower())


@runtime_checkable
class EventLog(Protocol):
    """An append-only list of one run's events."""

    @property
    def run_id(self) -> str: ...

    def load(self) -> list[Event]:
        """Every event of the run, in seq order."""
        ...

    def append(self, events: Sequence[Event]) -> None:
        """Adds one step's events; raises ConcurrentRunError when a seq is already taken."""
        ...


class MemoryLog:
    """A log kept in a list: for tests, embedding and benchmarks."""

    def __init__(self, run_id: str, events: Sequence[Event] = ()) -> None:
        self._run_id = run_id
        self._events: list[Event] = list(events)

    @property
    def run_id(self) -> str:
        return self._run_id

    def load(self) -> list[Event]:
        return list(self._events)

    def append(self, events: Sequence[Event]) -> None:
        expected = len(self._events)
        for offset, event in enumerate(events):
            if event.seq != expected + offset:
                next_seq = expected + offset
                raise ConcurrentRunError(
                    f"run {self._run_id}: event seq {event.seq} is not the next ({next_seq})"
                )
        self._events.extend(events)


def new_run_id() -> str:
    """A short, time-sortable run id such as ``20261130-144110-3f9a2c``."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{secrets.token_hex(3)}"


@runtime_checkable
class MemoryBank(Protocol):
    """Memory that lasts across runs: knowledge entries by scope and key, found by words,
    and timeline entries (summaries of compacted conversations), found by words and time.

    ``recall`` and ``timeline`` search the words of ``query`` (any text: quotes,
    operators and the like are words too, never syntax) and give the best ``limit``
    entries. ``as_of`` (an ISO time as events carry, or None for now) asks for the
    memory as it was then: a fork sees the memory of its fork point. Every write is
    kept with its time, so the memory of any past moment can be read back.
    """

    def store(self, scope: str, entry: MemoryEntry, run: str) -> None: ...

    def forget(self, scope: str, key: str, run: str) -> bool: ...

    def recall(
        self, scope: str, query: str, limit: int, as_of: str | None = None
    ) -> list[MemoryEntry]: ...

    def entries(self, scope: str, as_of: str | None = None) -> list[MemoryEntry]: ...

    def keep_timeline(self, scope: str, entry: TimelineEntry) -> None: ...

    def timeline(
        self,
        scope: str,
        query: str,
        limit: int,
        *,
        since: str | None = None,
        until: str | None = None,
        as_of: str | None = None,
    ) -> list[TimelineEntry]: ...


# ---------------------------------------------------------------------- images (images package)


@runtime_checkable
class ImageStore(Protocol):
    """Where the bytes of the images messages carry are kept, by content hash.

    ``digest`` is ``sha256:<hex>`` of ``data``; keeping the same image twice keeps
    one copy. ``get`` gives None for an image the store does not hold.
    """

    def put(self, digest: str, media_type: str, data: bytes) -> None: ...

    def get(self, digest: str) -> bytes | None: ...


# The image formats every supported API takes: the only ones roost keeps and serves.
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def image_type(data: bytes) -> str | None:
    """The media type of ``data`` by its magic bytes (``filetype``), when it is one of
    ``IMAGE_TYPES``; None for anything else (text, HTML, another format)."""
    import filetype  # magic bytes only; loaded when an image is

    kind = filetype.guess(data[:8192])
    return kind.mime if kind is not None and kind.mime in IMAGE_TYPES else None


def checked_image(digest: str, media_type: str, data: bytes) -> None:
    """Refuses (ImageError) to keep ``data`` as the image ``digest`` names unless it is.

    Its SHA-256 must be ``digest`` and its magic bytes a PNG, JPEG, GIF or WebP of
    ``media_type``: bytes from a run file are anyone's, and the first kept under a
    hash are the ones served (and sent to models) under it.
    """
    actual = "sha256:" + sha256(data).hexdigest()
    if actual != digest:
        raise ImageError(f"image {digest[:19]}…: its bytes hash to {actual[:19]}…; not kept")
    found = image_type(data)
    if found is None:
        raise ImageError(f"image {digest[:19]}…: not a PNG, JPEG, GIF or WebP image; not kept")
    if found != media_type:
        raise ImageError(
            f"image {digest[:19]}…: its bytes are {found}, not {media_type[:40]!r}; not kept"
        )


def verified_type(digest: str, data: bytes) -> str | None:
    """The media type of ``data`` when it is the image ``digest`` names (its hash, an
    image's magic bytes); None when it is not."""
    if "sha256:" + sha256(data).hexdigest() != digest:
        return None
    return image_type(data)


class MemoryImages:
    """Images kept in a dict: for tests, embedding, and runs without a store."""

    def __init__(self) -> None:
        self._images: dict[str, bytes] = {}

    def put(self, digest: str, media_type: str, data: bytes) -> None:
        checked_image(digest, media_type, data)
        self._images.setdefault(digest, data)

    def get(self, digest: str) -> bytes | None:
        return self._images.get(digest)


class LayeredImages:
    """Several image stores as one: ``put`` keeps in each, ``get`` reads the first that has it."""

    def __init__(self, stores: Sequence[ImageStore]) -> None:
        self.stores = tuple(stores)

    def put(self, digest: str, media_type: str, data: bytes) -> None:
        for store in self.stores:
            store.put(digest, media_type, data)

    def get(self, digest: str) -> bytes | None:
        for store in self.stores:
            data = store.get(digest)
            if data is not None:
                return data
        return None


class StampedLog:
    """A new run's log whose ``run_start`` is given the ``fields`` it leaves unset (None).

    A sub-flow's child run names its parent run and tool call this way
    (``parent``, ``parent_tool_call``), a batch row's run its batch and row
    (``batch``, ``row``): the Runner that starts the run need not know why.
    """

    def __init__(self, inner: EventLog, **fields: Any) -> None:
        self._inner = inner
        self._fields = fields

    @property
    def run_id(self) -> str:
        return self._inner.run_id

    def load(self) -> list[Event]:
        return self._inner.load()

    def append(self, events: Sequence[Event]) -> None:
        self._inner.append([self._stamped(event) for event in events])

    def _stamped(self, event: Event) -> Event:
        if event.type != "run_start":
            return event
        unset = {key: value for key, value in self._fields.items() if getattr(event, key) is None}
        return event.model_copy(update=unset) if unset else event
