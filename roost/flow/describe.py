"""Names of places in a flow, as a message shows them ("provider 'gpt'", "tool 'math#add'")."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from roost.flow.positions import Path

_NAMED = {
    "providers": "provider",
    "tools": "tool",
    "mcp_servers": "MCP server",
    "agents": "agent",
    "channels": "channel",
}


def _split(path: Path) -> tuple[str | None, Path]:
    """(the named thing ``path`` is inside, the rest of the path within it)."""
    if len(path) >= 4 and path[0] == "tools" and path[2] == "tools":
        return f"tool '{path[1]}#{path[3]}'", path[4:]
    if len(path) >= 2 and path[0] in _NAMED:
        return f"{_NAMED[str(path[0])]} {str(path[1])!r}", path[2:]
    if path and path[0] in ("defaults", "start", "vars"):
        return str(path[0]), path[1:]
    return None, path


def keys_text(path: Path) -> str:
    """``('replies', 0, 'name')`` as ``replies[0].name``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
            continue
        shown = part if part.isprintable() and part.strip() == part and part else repr(part)
        text += f".{shown}" if text else shown
    return text


def owner(path: Path) -> str:
    """The thing at ``path``: ``channel 'team'``, ``director of channel 'team'``, ``the flow``."""
    base, rest = _split(path)
    if base is None:
        return keys_text(rest) if rest else "the flow"
    return f"{keys_text(rest)} of {base}" if rest else base


def label(path: Path) -> str:
    """The value at ``path`` as a message's subject: ``max_rounds of channel 'team'``."""
    return owner(path) if path else "the flow"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` when a choice is close to ``word``, else ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def one_of(names: Iterable[str]) -> str:
    """``a, b or c``."""
    items = list(names)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]
