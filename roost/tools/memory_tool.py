"""``memory#store``, ``memory#recall`` and ``memory#forget``: the tools of a flow's memory.

Each works on the memory scope of the agent it is offered to, through the
``MemoryBank`` the engine hands the toolbox. The engine records what a
successful ``store`` or ``forget`` changed as a ``memory`` event of the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.events import memory_entry
from roost.messages import ToolSpec
from roost.tools.arguments import argument_problem, schema_validator
from roost.tools.base import ToolOutcome

if TYPE_CHECKING:
    from roost.eventlog import MemoryBank

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
}
DESCRIPTIONS = {
    "store": "Remember a fact or preference for later conversations, under a short key "
    "(storing a key again replaces it). importance: 0 to 1 (default 0.5).",
    "recall": "Look up remembered entries whose key or content has words of the query.",
    "forget": "Remove the remembered entry with this key.",
}


def memory_spec(name: str, wire: str) -> ToolSpec:
    """How ``memory#name`` is offered to a model under the wire name ``wire``."""
    return ToolSpec(name=wire, description=DESCRIPTIONS[name], parameters=PARAMETERS[name])


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
        """Stores, recalls or forgets; a bad argument is an error result, never a raise."""
        if problem := argument_problem(self._validator, arguments):
            return ToolOutcome(f"invalid arguments: {problem}", is_error=True)
        if self.name == "store":
            entry = memory_entry(arguments)
            self._bank.store(self._scope, entry, self._run)
            return ToolOutcome(f"Remembered {entry.key!r}.")
        if self.name == "forget":
            if self._bank.forget(self._scope, arguments["key"], self._run):
                return ToolOutcome(f"Forgot {arguments['key']!r}.")
            return ToolOutcome(f"Nothing is remembered under {arguments['key']!r}.", True)
        found = self._bank.recall(self._scope, arguments["query"], arguments.get("limit", 5))
        if not found:
            return ToolOutcome("Nothing remembered matches.")
        return ToolOutcome("\n".join(f"- {e.key}: {e.content}" for e in found))
