"""``memory#store``, ``recall``, ``forget`` and ``timeline_recall``: a flow's memory tools.

Each works on the memory scope of the agent it is offered to, through the
``MemoryBank`` the engine hands the toolbox. The engine records what a
successful ``store`` or ``forget`` changed as a ``memory`` event of the run.
``timeline_recall`` looks up the summaries of earlier conversations (kept with
``memory: {timeline: true}``) by words and by the time they were written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.events import iso_bound, memory_entry
from roost.messages import ToolSpec
from roost.tools.arguments import argument_problem, schema_validator
from roost.tools.base import Declared, ToolOutcome

if TYPE_CHECKING:
    from roost.ports import MemoryBank

MAX_KEY = 200  # characters of a key
MAX_CONTENT = 4000  # characters of an entry's content
MAX_LIMIT = 50  # entries one recall gives at most

_KEY = {"type": "string", "minLength": 1, "maxLength": MAX_KEY, "description": "A short name."}
PARAMETERS: dict[str, dict[str, Any]] = {
    "store": {
        "type": "object",
        "properties": {
            "key": _KEY,
            "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT},
            "importance": {"type": "number", "minimum": 0, "maximum": 1},
        },
        "required": ["key", "content"],
        "additionalProperties": False,
    },
    "recall": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    "forget": {
        "type": "object",
        "properties": {"key": _KEY},
        "required": ["key"],
        "additionalProperties": False,
    },
    "timeline_recall": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "Words to look for; empty: every summary of the period.",
            },
            "since": {
                "type": "string",
                "description": "Only summaries written at or after this ISO date or time "
                "(2026-03-01, 2026-03-01T14:30; UTC unless it gives an offset).",
            },
            "until": {
                "type": "string",
                "description": "Only summaries written at or before this ISO date or time "
                "(a date alone counts its whole day).",
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
}
DESCRIPTIONS = {
    "store": "Remember a fact or preference for later conversations, under a short key "
    "(storing a key again replaces it). importance: 0 to 1 (default 0.5).",
    "recall": "Look up remembered entries whose key or content has words of the query.",
    "forget": "Remove the remembered entry with this key.",
    "timeline_recall": "Look up summaries of earlier conversations whose words match the "
    "query, written between since and until; each comes with the time it was written.",
}


def memory_spec(name: str, wire: str) -> ToolSpec:
    """How ``memory#name`` is offered to a model under the wire name ``wire``."""
    return ToolSpec(name=wire, description=DESCRIPTIONS[name], parameters=PARAMETERS[name])


def memory_declared(name: str, wire: str) -> Declared:
    """``memory#name`` as a model is offered it, bound to no bank (what a replay offers)."""
    return Declared(memory_spec(name, wire), timeout=MemoryTool.timeout)


class MemoryTool:
    """One memory tool bound to a scope and a bank."""

    direct_output = False
    approval = False
    timeout = 10.0

    def __init__(self, name: str, wire: str, scope: str, bank: MemoryBank, run: str) -> None:
        self.spec = memory_spec(name, wire)
        self.name = name
        self._scope = scope
        self._bank = bank
        self._run = run
        self._validator = schema_validator(PARAMETERS[name])

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        """Stores, recalls, forgets or looks the timeline up; a bad argument is an error
        result, never a raise."""
        if problem := argument_problem(self._validator, arguments):
            return ToolOutcome(f"invalid arguments: {problem}", is_error=True)
        if any("\x00" in str(arguments.get(name, "")) for name in ("key", "content")):
            # No database keeps one (PostgreSQL refuses it): refused like a key too long.
            return ToolOutcome("invalid arguments: a key or content cannot hold NUL", True)
        if self.name == "store":
            entry = memory_entry(arguments)
            self._bank.store(self._scope, entry, self._run)
            return ToolOutcome(f"Remembered {entry.key!r}.")
        if self.name == "forget":
            if self._bank.forget(self._scope, arguments["key"], self._run):
                return ToolOutcome(f"Forgot {arguments['key']!r}.")
            return ToolOutcome(f"Nothing is remembered under {arguments['key']!r}.", True)
        if self.name == "timeline_recall":
            return self._timeline(arguments)
        found = self._bank.recall(self._scope, arguments["query"], arguments.get("limit", 5))
        if not found:
            return ToolOutcome("Nothing remembered matches.")
        return ToolOutcome("\n".join(f"- {e.key}: {e.content}" for e in found))

    def _timeline(self, arguments: dict[str, Any]) -> ToolOutcome:
        """The timeline entries the arguments ask for, each with its time; dates checked."""
        bounds: dict[str, str | None] = {}
        for name, end in (("since", False), ("until", True)):
            text = arguments.get(name)
            try:
                bounds[name] = None if text is None else iso_bound(text, end=end)
            except (ValueError, OverflowError):  # overflow: an offset past year 1 or 9999
                return ToolOutcome(
                    f"invalid arguments: {name}: {text!r} is not an ISO date or time "
                    "(such as 2026-03-01 or 2026-03-01T14:30)",
                    is_error=True,
                )
        since, until = bounds["since"], bounds["until"]
        if since is not None and until is not None and since > until:
            return ToolOutcome("invalid arguments: since is after until", is_error=True)
        found = self._bank.timeline(
            self._scope, arguments["query"], arguments.get("limit", 5), since=since, until=until
        )
        if not found:
            return ToolOutcome("No summary of an earlier conversation matches.")
        return ToolOutcome("\n".join(f"- {shown_time(e.at)}: {e.summary}" for e in found))


def shown_time(at: str) -> str:
    """An event time as a model reads it: ``2026-03-01 14:30:05 UTC``."""
    return f"{at[:19].replace('T', ' ')} UTC"
