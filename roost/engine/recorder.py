"""Records events: builds them cheaply, applies them to the state, appends them in batches.

An event is applied to the live state the moment it is made, so the
interpreter's next decision already sees it; the log receives the batch when
the engine is about to wait for a model, a tool or a person (``flush``), so a
step's events become durable together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from roost.events import (
    Event,
    LlmAttempt,
    LlmCallEvent,
    LlmResponse,
    LlmUsage,
    MessageEvent,
    RouteRecord,
    SelectEvent,
    map_texts,
    now_iso,
    valid_text,
    valid_texts,
)
from roost.messages import ModelRequest
from roost.runstate import HANDLERS, STATUS_AFTER, RunState, Status

if TYPE_CHECKING:
    from roost.flow.redact import Redactor
    from roost.ports import EventLog

E = TypeVar("E", bound=BaseModel)

# What stamps events: a callable giving the time as the log writes it (ISO 8601, UTC).
Clock = Callable[[], str]


class _Template(NamedTuple):
    """What every event of one class shares: the defaults, and how to finish one."""

    cls: type[BaseModel]
    defaults: dict[str, Any]  # every field in declaration order (so the JSON reads seq, type, ...)
    factories: tuple[tuple[str, Any], ...]  # fields whose default is made afresh per event
    fields_set: set[str]
    extra: dict[str, Any] | None
    handler: Callable[[RunState, Any], None] | None
    status: Status | None  # the run's status after such an event; None: unchanged


_TEMPLATES: dict[type[BaseModel], _Template] = {}
_set_attr = object.__setattr__
# pydantic models keep object's __new__; calling it directly skips a lookup through the MRO.
_new = object.__new__


def build_event(cls: type[E], fields: dict[str, Any]) -> E:
    """An event of type ``cls`` from trusted fields, without pydantic's validation pass.

    The engine makes every event itself from values of the right types, so
    validating them again would only cost time on every turn; the result is
    the same frozen model ``cls(**fields)`` would give.
    """
    template = _TEMPLATES.get(cls) or _template(cls)
    data = {**template.defaults, **fields}
    for name, factory in template.factories:
        if name not in fields:
            data[name] = factory()
    return _instance(cls, data, template)


def build_whole(cls: type[E], data: dict[str, Any]) -> E:
    """``build_event`` for ``data`` that holds every field of ``cls``, in declaration order.

    For the records made at every model call: no defaults to merge in.
    """
    return _instance(cls, data, _TEMPLATES.get(cls) or _template(cls))


def model_request(
    system: str, messages: Sequence[Any], tools: tuple[Any, ...], node: str
) -> ModelRequest:
    """``build_event(ModelRequest, ...)`` with the fields written out: once per reply.

    ``messages`` may be a lazy sequence: it is kept as given, so it is built only when read.
    """
    data = {
        "system": system,
        "messages": messages,
        "tools": tools,
        "node": node,
        "reply_format": None,
    }
    template = _TEMPLATES.get(ModelRequest) or _template(ModelRequest)
    return _instance(ModelRequest, data, template)


def _instance(cls: type[E], data: dict[str, Any], template: _Template) -> E:
    event = _new(cls)
    _set_attr(event, "__dict__", data)
    # Shared by every event of the class: frozen models never add to it, and
    # pydantic copies it before changing a copy (model_copy), so one set serves
    # them all and the garbage collector has one object fewer per event to track.
    _set_attr(event, "__pydantic_fields_set__", template.fields_set)
    _set_attr(event, "__pydantic_extra__", template.extra)
    _set_attr(event, "__pydantic_private__", None)
    return event


def _template(cls: type[BaseModel]) -> _Template:
    # Required fields get None placeholders that the caller always fills.
    data: dict[str, Any] = {}
    factories: list[tuple[str, Any]] = []
    for name, info in cls.model_fields.items():
        if info.default_factory is not None:
            factories.append((name, info.default_factory))
            data[name] = None
        else:
            data[name] = None if info.default is PydanticUndefined else info.default
    # Every field counts as set, as when pydantic validates a complete event.
    # Events keep unknown fields (extra="allow"); pydantic then wants a dict of extras
    # (shared too: model_copy copies it before adding to it).
    extra: dict[str, Any] | None = {} if cls.model_config.get("extra") == "allow" else None
    kind = data.get("type")
    handler = HANDLERS.get(kind) if isinstance(kind, str) else None
    status = STATUS_AFTER.get(kind) if isinstance(kind, str) else None
    template = _Template(cls, data, tuple(factories), set(data), extra, handler, status)
    _TEMPLATES[cls] = template
    return template


class Recorder:
    """Makes the run's events, keeps the state current and appends them batch by batch.

    ``clock`` stamps each batch (``now_iso`` unless the caller gives another).
    """

    def __init__(
        self,
        state: RunState,
        log: EventLog,
        notify: Callable[[list[Event]], None] | None = None,
        redact: Redactor | None = None,
        clock: Clock = now_iso,
    ) -> None:
        self.state = state
        self.log = log
        self.run_id = log.run_id
        self.batch: list[Event] = []
        self._notify = notify
        self._clock = clock  # a replay's gives each event the time recorded for its seq
        self._ts = ""
        # Values read from the environment never reach an event (and so never the log,
        # the store or the state built from them); None when the flow read none.
        self._redact = redact if redact else None
        self._text = self._masked_text if self._redact is not None else valid_text

    def now(self) -> str:
        """The time the next batch would be stamped with (a replay's: the recorded one)."""
        return self._ts if self.batch else self._clock()

    def _masked_text(self, text: str) -> str:
        assert self._redact is not None
        return self._redact(valid_text(text))

    def add(self, cls: type[E], **fields: Any) -> E:
        """Makes one event, applies it to the state and queues it for the log."""
        template = _TEMPLATES.get(cls) or _template(cls)
        # seq, run and ts are keys of the defaults already, so they keep their place.
        data = {**template.defaults}
        text = self._text
        for name, value in fields.items():
            data[name] = map_texts(value, text)
        for name, factory in template.factories:
            if name not in fields:
                data[name] = factory()
        event: E = self._record(template, data)
        return event

    # The busiest events have their fields written out in declaration order (seq, run
    # and ts first, filled in by _record), which skips merging them into the defaults.

    def add_message(self, frm: str, to: str, content: str, data: Any = None) -> MessageEvent:
        """``add(MessageEvent, ...)`` with its fields written out: once per message."""
        if not content.isascii():
            content = valid_text(content)
        if self._redact is not None:
            content = self._redact(content)
            if data is not None:
                data = map_texts(data, self._redact)
        fields = {
            "seq": 0,
            "run": "",
            "ts": "",
            "type": "message",
            "from_": frm,
            "to": to,
            "content": content,
            "state": "success",
            "images": None,
            "background": None,
            "data": data,
        }
        event: MessageEvent = self._record(_MESSAGE, fields)
        return event

    def add_select(
        self,
        channel: str,
        candidates: tuple[str, ...],
        chosen: str,
        by: str,
        routes: tuple[RouteRecord, ...] | None = None,
    ) -> SelectEvent:
        """``add(SelectEvent, ...)`` with its fields written out: once per channel turn."""
        data = {
            "seq": 0,
            "run": "",
            "ts": "",
            "type": "select",
            "channel": channel,
            "candidates": candidates,
            "chosen": chosen,
            "by": by,
            "routes": routes,
        }
        event: SelectEvent = self._record(_SELECT, data)
        return event

    def add_llm_call(
        self,
        node: str,
        provider: str,
        model: str,
        tools: tuple[str, ...],
        digest: str,
        response: LlmResponse,
        usage: LlmUsage,
        attempts: tuple[LlmAttempt, ...],
        purpose: str | None = None,
        waited: float | None = None,
    ) -> LlmCallEvent:
        """``add(LlmCallEvent, ...)`` of an answered call, its fields written out."""
        if self._redact is not None:
            model, response, attempts = map_texts((model, response, attempts), self._text)
        elif response.tool_calls or response.reasoning or not response.text.isascii():
            response = valid_texts(response)
        data = {
            "seq": 0,
            "run": "",
            "ts": "",
            "type": "llm_call",
            "node": node,
            "provider": provider,
            "model": model,
            "tools": tools,
            "request_digest": digest,
            "response": response,
            "usage": usage,
            "error": None,
            "attempts": attempts,
            "purpose": purpose,
            "waited": waited,
        }
        event: LlmCallEvent = self._record(_LLM_CALL, data)
        return event

    def _record(self, template: _Template, data: dict[str, Any]) -> Any:
        """The one way an event is made: stamped, numbered, applied to the state and queued.

        ``data`` holds every field of the event in declaration order, its seq,
        run and ts as placeholders that are filled in here.
        """
        batch = self.batch
        if not batch:
            # One timestamp per batch: its events happen with nothing awaited between them.
            self._ts = self._clock()
        state = self.state
        seq = state.next_seq
        data["seq"] = seq
        data["run"] = self.run_id
        data["ts"] = self._ts
        event: Any = _new(
            template.cls
        )  # _instance, inlined: this runs two or three times a message
        _set_attr(event, "__dict__", data)
        _set_attr(event, "__pydantic_fields_set__", template.fields_set)
        _set_attr(event, "__pydantic_extra__", template.extra)
        _set_attr(event, "__pydantic_private__", None)
        handler = template.handler
        if handler is not None:
            handler(state, event)
        if template.status is not None:
            state.status = template.status
        state.next_seq = seq + 1
        if not state.run_id:
            state.run_id = self.run_id
        batch.append(event)
        return event

    def flush(self) -> None:
        """Appends the queued events to the log as one batch."""
        batch = self.batch
        if not batch:
            return
        self.batch = []
        self.log.append(batch)
        if self._notify is not None:
            self._notify(batch)


_MESSAGE = _template(MessageEvent)
_SELECT = _template(SelectEvent)
_LLM_CALL = _template(LlmCallEvent)
