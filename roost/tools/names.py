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

from roost.flow.tool_refs import ToolRef, parse_ref

WIRE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_MAX = 64


def wire_name(reference: str) -> str:
    """The provider-safe name of a flow reference: ``math#add`` -> ``math__add``."""
    text = parse_ref(reference).text.replace("#", "__")
    safe = _UNSAFE.sub("_", text) or "tool"
    if len(safe) <= _MAX:
        return safe
    digest = hashlib.sha256(text.encode()).hexdigest()[:8]
    return f"{safe[: _MAX - 9]}_{digest}"


__all__ = ["WIRE_NAME", "ToolRef", "parse_ref", "wire_name"]
