"""Joining streamed tool-call fragments into whole calls, whatever the server's habits.

OpenAI streams a call as an ``index`` with an ``id`` and ``name`` first and
argument fragments after. Compatible servers differ: some repeat the id and
name on every fragment, some give every call index 0 and tell calls apart by
id only, some send the whole argument text again at the end. The accumulator
accepts all of these.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from roost.messages import ToolCall


def parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """Parsed arguments and, when ``text`` is not a JSON object, the raw text."""
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except ValueError:
        return {}, text
    if not isinstance(value, dict):
        return {}, text
    return value, None


def arguments_text(call: ToolCall) -> str:
    """The argument text to send back: the model's own when it was not valid JSON."""
    if call.raw_arguments is not None:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def make_call(
    call_id: str, name: str, text: str, details: dict[str, Any] | None = None
) -> ToolCall:
    """A neutral ToolCall from the wire's id, name and argument text."""
    arguments, raw = parse_arguments(text)
    return ToolCall(
        id=call_id, name=name, arguments=arguments, raw_arguments=raw, provider_details=details
    )


@dataclass
class _Partial:
    id: str = ""
    name: str = ""
    arguments: str = ""

    def add_arguments(self, fragment: str) -> None:
        # A server that repeats the whole argument text once it is complete.
        if fragment == self.arguments and _is_json(fragment):
            return
        self.arguments += fragment


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@dataclass
class ToolCallAccumulator:
    """Collects tool-call deltas (index, id, name, argument fragment) in arrival order."""

    _calls: list[_Partial] = field(default_factory=list)
    _by_index: dict[int, _Partial] = field(default_factory=dict)

    def add(
        self, index: int | None, call_id: str | None, name: str | None, fragment: str | None
    ) -> None:
        """Fold one delta into the call it belongs to."""
        call = self._call_for(index if index is not None else -1, call_id or "")
        if call_id and not call.id:
            call.id = call_id
        if name and name != call.name:
            call.name = name if not call.name else call.name + name
        if fragment:
            call.add_arguments(fragment)

    def _call_for(self, index: int, call_id: str) -> _Partial:
        current = self._by_index.get(index)
        if current is not None and (not call_id or not current.id or call_id == current.id):
            return current
        # A new index is a new call, even under an id seen before: two calls of one
        # answer may share an id. Only a server that reuses an index (or sends none) is
        # followed by id.
        known = None
        if current is not None or index < 0:
            known = next((c for c in self._calls if call_id and c.id == call_id), None)
        if known is None:
            known = _Partial()
            self._calls.append(known)
        self._by_index[index] = known
        return known

    def calls(self) -> tuple[ToolCall, ...]:
        """The whole calls, in order; a call without an id gets one made up."""
        return tuple(
            make_call(c.id or f"call_{n}", c.name, c.arguments)
            for n, c in enumerate(self._calls)
            if c.name or c.arguments
        )
