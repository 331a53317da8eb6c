"""An event to and from its JSON line (or dict), ``from`` spelt as in the contract."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter

from roost.events._models import Event


@cache
def event_adapter() -> TypeAdapter[Event]:
    """The validator of any one event, built once, when the first event is read back (a
    run that only writes its events never builds it)."""
    return TypeAdapter(Event)


def parse_event(data: str | bytes | dict[str, Any]) -> Event:
    """One event from a JSON line or a dict; raises pydantic.ValidationError when malformed."""
    if isinstance(data, dict):
        return event_adapter().validate_python(data)
    return event_adapter().validate_json(data)


def event_json(event: BaseModel) -> str:
    """The event as one JSON line (no newline), ``from`` spelt as in the contract."""
    return event.model_dump_json(by_alias=True)


def event_dict(event: BaseModel) -> dict[str, Any]:
    return event.model_dump(by_alias=True, mode="json")
