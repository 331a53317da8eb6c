"""The records an event holds: a flow, an image, a route, a model's answer, memory, skills.

Each is frozen as the events are. The optional fields roost adds are left out of the
JSON when they have no value (``absent_when_none``), here and in the events.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


def _is_none(value: object) -> bool:
    return value is None


# roost's own optional fields (beyond the table of docs/events.md) are left out of the JSON when
# they have no value; the table's fields are always written, as null when empty
# (llm_call's response, usage and error), so a reader can count on every one of them.
def absent_when_none() -> Any:
    return Field(default=None, exclude_if=_is_none)


class ImageRecord(BaseModel):
    """An image a message carries, by content: ``hash`` (``sha256:<hex>`` of its bytes),
    ``media_type`` and the ``name`` it was given (a file's name or a URL), for people."""

    model_config = ConfigDict(frozen=True, extra="allow")
    hash: str
    media_type: str
    name: str = ""


class BackgroundNote(BaseModel):
    """What a message delivering a background task's result says about the task."""

    model_config = ConfigDict(extra="allow", frozen=True)

    task: str
    child_run: str | None = None
    status: Literal["done", "failed"] = "done"


class RouteRecord(BaseModel):
    """One route of a decision: its target, its condition in short, whether it held."""

    model_config = ConfigDict(extra="allow", frozen=True)

    to: str
    when: str
    held: bool


class FlowRecord(BaseModel):
    model_config = ConfigDict(frozen=True)
    path: str
    name: str
    hash: str
    text: str


class _Record(BaseModel):
    # Frozen as the events are; unknown keys are kept (a newer roost's log loads and is
    # written back as it was read).
    model_config = ConfigDict(extra="allow", frozen=True)


class RecordedToolCall(_Record):
    """A tool call in a model's answer, as ``llm_call.response.tool_calls`` records it."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = absent_when_none()  # the text, when it was not JSON
    provider_details: dict[str, Any] | None = absent_when_none()


class RecordedReasoning(_Record):
    """Thinking or reasoning in a model's answer (``roost.messages.ReasoningPart``'s fields)."""

    kind: str
    text: str = ""
    signature: str | None = absent_when_none()
    data: str | None = absent_when_none()
    id: str | None = absent_when_none()
    provider_details: dict[str, Any] | None = absent_when_none()


def _is_empty(value: object) -> bool:
    return not value


class LlmResponse(_Record):
    """What a model answered: text, tool calls, reasoning, and how the answer ended.

    ``finish_reason`` is the API's own word; ``cut`` (the answer reached the
    token limit), ``refused`` and ``notes`` (corrections roost made to what the
    provider reported) are written only when they say something.
    """

    text: str = ""
    tool_calls: tuple[RecordedToolCall, ...] = ()
    reasoning: tuple[RecordedReasoning, ...] = ()
    finish_reason: str | None = absent_when_none()
    cut: bool = Field(default=False, exclude_if=_is_empty)
    refused: bool = Field(default=False, exclude_if=_is_empty)
    notes: tuple[str, ...] = Field(default=(), exclude_if=_is_empty)


class LlmUsage(_Record):
    """The tokens one model call used, as the provider reported them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    calls: int = 1


class LlmAttempt(_Record):
    """One request tried for a model call: which provider and model, and how it went.

    ``outcome`` is ``ok``, ``error``, ``http STATUS``, ``connection error`` or the
    failure's kind; ``status`` is the HTTP status when a response came.
    """

    provider: str
    model: str
    outcome: str
    status: int | None = absent_when_none()


class MemoryEntry(_Record):
    """One knowledge entry of a memory: what a model stored under ``key``."""

    key: str
    content: str = ""
    importance: float = 0.5


class TimelineEntry(_Record):
    """One timeline entry: the summary that replaced older messages of a run, and when."""

    at: str  # ISO time the summary was written (the compact event's ts)
    run: str
    summary: str


def memory_entry(arguments: dict[str, Any]) -> MemoryEntry:
    """The entry a ``memory#store`` call's arguments describe (importance 0.5 when not given)."""
    return MemoryEntry(
        key=arguments["key"],
        content=arguments.get("content", ""),
        importance=float(arguments.get("importance", 0.5)),
    )


class SkillInfo(_Record):
    """One skill as agents are shown it: its name, its description, and where it was found."""

    name: str
    description: str
    source: str  # "flow" (skills/ beside the flow), a skill_paths entry as written, or "user"
