"""What every log backend checks in the events it reads and writes.

A log holds one run: seq 0, 1, 2... without a gap, every event of the same
run, and a ``run_start`` only at seq 0 (a second one in the middle would splice
two histories into one). A stored payload or a file's line that pydantic
refuses is described in one line. Integers meet columns of fixed size at the
store's edge (the store's integer columns are 32-bit on PostgreSQL), so every
seq and count is checked there, never left to the database driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.events import Event, RunStartEvent

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from pydantic import ValidationError

# The largest value the store's integer columns hold on every database (PostgreSQL's integer).
COLUMN_MAX = 2**31 - 1


def order_problem(event: Event, expected_seq: int, run_id: str | None) -> str | None:
    """Why ``event`` cannot come next in the log of ``run_id``; None when it can."""
    if event.seq != expected_seq:
        return f"event seq {event.seq} where {expected_seq} was expected"
    if run_id is not None and event.run != run_id:
        return f"event of run {event.run!r} in the log of run {run_id!r}"
    if isinstance(event, RunStartEvent) and event.seq != 0:
        return f"a second run_start at seq {event.seq}: a log holds one run"
    return None


def invalid_event_text(exc: ValidationError, *, skip: int = 0) -> str:
    """pydantic's first complaint about an event as one line (an unknown type named as such).

    ``skip`` drops the first parts of the error's location (an index into a list of events).
    """
    first = exc.errors()[0]
    if first["type"] == "union_tag_invalid":
        tag = first.get("ctx", {}).get("tag")
        return f"event type {tag!r} is unknown to this version of roost"
    where = ".".join(str(part) for part in first["loc"][skip:])
    return f"invalid event: {where}: {first['msg']}"


def first_difference(ours: Sequence[Event], theirs: Sequence[Event]) -> int | None:
    """The seq where two copies of a run part ways; None when they hold the same events.

    They part where an event differs (an edited line) or where the shorter one ends.
    """
    for seq, (mine, other) in enumerate(zip(ours, theirs, strict=False)):
        if event_bytes(mine) != event_bytes(other):
            return seq
    return None if len(ours) == len(theirs) else min(len(ours), len(theirs))


def event_bytes(event: Event) -> bytes:
    """The event's JSON as the log writes it, made by the model's serializer straight into bytes."""
    # (model_dump_json would decode them to a str that a log encodes again)
    serializer = type(event).__pydantic_serializer__
    text: bytes = serializer.to_json(event, by_alias=True)
    return text


def seq_problem(seqs: Iterable[int]) -> str | None:
    """Why these seqs cannot be stored (outside 0..COLUMN_MAX - 1); None when they can."""
    for seq in seqs:
        if not 0 <= seq < COLUMN_MAX:
            return f"event seq {seq} is outside what the store holds (0 to {COLUMN_MAX - 1})"
    return None


def clamped_count(value: int) -> int:
    """``value`` brought into 0..COLUMN_MAX, for a count the store sums in a column."""
    return min(max(value, 0), COLUMN_MAX)
