"""Names of places in a flow, as a message shows them ("provider 'gpt'", "tool 'math#add'")."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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


MAX_HINTS = 50  # did-you-mean hints looked for in one file; a file with more gets no more
MAX_NAME = 64  # characters: a longer word or name is no typo to hint at
MAX_SCAN = 2000  # names looked at for one hint
MAX_COMPARED = 200  # names of a fitting length compared in full for one hint


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` when a choice is close to ``word``, else ``""``.

    Bounded whatever the flow holds: only words and names of up to ``MAX_NAME``
    characters, of lengths that could match, among the first ``MAX_SCAN`` names.
    """
    size = len(word)
    if not size or size > MAX_NAME:
        return ""
    # difflib's ratio is at most 2 * shorter / (both lengths): below 0.6 it cannot match.
    low, high = size * 3 // 7, size * 7 // 3 + 1
    fitting: list[str] = []
    for scanned, choice in enumerate(choices):
        if scanned >= MAX_SCAN or len(fitting) >= MAX_COMPARED:
            break
        if low <= len(choice) <= high and choice != word:
            fitting.append(choice)
    folded = word.casefold()
    same = [choice for choice in fitting if choice.casefold() == folded]  # always: ALWAYS
    close = same or difflib.get_close_matches(word, fitting, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Hints:
    """Did-you-mean hints for one file: at most ``MAX_HINTS`` are looked for.

    A file with thousands of unknown names gets the first hints and then plain
    messages, so that validating it stays fast.
    """

    def __init__(self, limit: int = MAX_HINTS) -> None:
        self.left = limit

    def __call__(self, word: str, choices: Iterable[str]) -> str:
        if self.left <= 0:
            return ""
        self.left -= 1
        return did_you_mean(word, choices)


def one_of(names: Iterable[str]) -> str:
    """``a, b or c``."""
    items = list(names)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]
