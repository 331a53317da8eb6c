"""How a flow names its tools and how those names reach a model.

A flow refers to a tool as ``name``, ``@@name`` (the same thing, written the
way AnythingLLM users do) or ``group#child`` (a child of a group, or one tool
of an MCP server). Providers only accept tool names matching
``^[a-zA-Z0-9_-]{1,64}$``, so every reference also gets a *wire name*: ``#``
becomes ``__`` (``math#add`` is offered as ``math__add``), any other character
outside that set becomes ``_``, and a name longer than 64 characters is cut and
ends with a short digest so that two long names stay apart.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

WIRE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_MAX = 64


@dataclass(frozen=True, slots=True)
class ToolRef:
    """A parsed reference: ``parent`` is the tool entry, ``child`` its member if any."""

    parent: str
    child: str | None = None

    @property
    def text(self) -> str:
        """The reference as a flow writes it (without ``@@``)."""
        return self.parent if self.child is None else f"{self.parent}#{self.child}"


def parse_ref(reference: str) -> ToolRef:
    """Splits ``@@name``, ``name`` or ``group#child`` into its parts."""
    text = reference.removeprefix("@@").strip()
    parent, sep, child = text.partition("#")
    return ToolRef(parent, child if sep else None)


def wire_name(reference: str) -> str:
    """The provider-safe name of a flow reference: ``math#add`` -> ``math__add``."""
    text = parse_ref(reference).text.replace("#", "__")
    safe = _UNSAFE.sub("_", text) or "tool"
    if len(safe) <= _MAX:
        return safe
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"{safe[: _MAX - 9]}_{digest}"
