"""The texts and times an event holds: valid UTF-8, and the log's fixed-width UTC times."""

from __future__ import annotations

import time as systime
from datetime import UTC, date, datetime, time
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from collections.abc import Callable


def valid_text(text: str) -> str:
    """``text`` as UTF-8 can carry it: surrogate pairs joined, a lone surrogate made U+FFFD.

    Lone surrogates come from bytes that were not UTF-8 (a command-line argument,
    a file name), from a ``\\ud800`` escape in YAML or JSON, or from a model's
    emoji split across two streamed chunks; no log, store or terminal can hold them.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def map_texts(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` with ``change`` applied to every string in it (dicts, lists, tuples, models)."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {map_texts(key, change): map_texts(item, change) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(map_texts(item, change) for item in value)
    if isinstance(value, BaseModel):  # a record inside an event: its fields and its extras
        return value.model_copy(update={name: map_texts(item, change) for name, item in value})
    return value


def valid_texts(value: Any) -> Any:
    """``value`` with ``valid_text`` applied to every string inside it."""
    return map_texts(value, valid_text)


# The second last formatted, and its text up to the fraction: one object, so that a
# reader in another thread never pairs one second with another's text.
_formatted: tuple[int, str] = (-1, "")


def now_iso() -> str:
    """The current time as the log and the store write it: ISO 8601 in UTC, fixed width.

    Always six digits of microseconds (``isoformat`` drops a zero fraction, which
    would put 12:00:00Z after 12:00:00.5Z in text order). Made cheaply, as it
    stamps every event: the date and time up to the second are formatted once a
    second; only the microseconds change between the events of a busy run.
    """
    global _formatted
    second, nanos = divmod(systime.time_ns(), 1_000_000_000)
    known, prefix = _formatted
    if second != known:
        prefix = systime.strftime("%Y-%m-%dT%H:%M:%S.", systime.gmtime(second))
        _formatted = (second, prefix)
    return f"{prefix}{nanos // 1000:06d}Z"


def iso_bound(text: str, *, end: bool) -> str:
    """``text``, an ISO date or time, as a fixed-width UTC time with microseconds.

    (Fixed width, as ``now_iso`` writes it, so text order is time order.)

    A date alone is its day's first moment, or its last when it ``end``s a period;
    a time without an offset is UTC. Raises ValueError for anything else (OverflowError
    for a time an offset moves out of the years 1 to 9999).
    """
    text = text.strip()
    try:
        day = date.fromisoformat(text)
    except ValueError:
        moment = datetime.fromisoformat(text)
    else:
        moment = datetime.combine(day, time.max if end else time.min)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
