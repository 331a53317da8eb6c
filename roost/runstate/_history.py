"""A run's history and what is read from it: threads of entries, and the run's answer.

A ``Thread`` is an append-only list of history indices (a node's inbox, a pair's
conversation) with a digest chained entry by entry, so that no turn rescans the
history. The answer functions say what a run answered, each node's end markers
read as its flow says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from hashlib import sha256
from typing import TYPE_CHECKING

from roost.events import ErrorEvent, InterruptEvent, MessageEvent
from roost.flow.markers import MarkerRule, marker_in

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

EMPTY_DIGEST = b""

# One entry of the history: who said what to whom, and whether it succeeded
# (``from_``, ``to``, ``content``, ``state``, ``seq``, ``ts``). The entries are the
# log's own events, so the history costs no object of its own per message.
HistoryEntry = MessageEvent | InterruptEvent | ErrorEvent


@dataclass
class Thread:
    """An append-only list of history indices with a digest chained over them.

    ``sizes`` holds the running sum of the entries' sizes (``roost.context_window.entry_size``),
    so that a view's size is known without measuring the history again.
    """

    indices: list[int] = field(default_factory=list)
    digest: bytes = EMPTY_DIGEST
    sizes: list[int] = field(default_factory=list)
    # The entries' recorded times, chained likewise, for the requests of flows that show
    # them (defaults.timestamps): worked out when first asked, then only for new entries.
    _times: bytes = field(default=EMPTY_DIGEST, compare=False, repr=False)
    _timed: int = field(default=0, compare=False, repr=False)
    # The entries as transcript lines (a director's view of a channel), likewise made
    # only for the entries added since last asked: a long run's prompts stay linear.
    _lines: list[str] = field(default_factory=list, compare=False, repr=False)
    _text: str = field(default="", compare=False, repr=False)

    def add(self, index: int, payload: bytes, size: int = 0) -> None:
        """Appends a history index; ``payload`` is the entry's bytes for the digest chain."""
        self.indices.append(index)
        self.digest = sha256(self.digest + payload).digest()
        sizes = self.sizes
        sizes.append(size + (sizes[-1] if sizes else 0))

    def times_digest(self, history: Sequence[HistoryEntry]) -> bytes:
        """A digest chained over the recorded times (``ts``) of the thread's entries."""
        indices = self.indices
        if self._timed < len(indices):
            times = self._times
            for index in indices[self._timed :]:
                times = sha256(times + history[index].ts.encode()).digest()
            self._times, self._timed = times, len(indices)
        return self._times

    def lines(
        self, history: Sequence[HistoryEntry], line: Callable[[HistoryEntry], str]
    ) -> tuple[list[str], str]:
        """The entries as ``line`` shows them, and those lines joined (each ends in a newline).

        ``line`` must be the same function every time one thread is asked (the lines
        of the entries already shown are kept, not made again). The list is the
        thread's own: a caller that changes it must copy it first.
        """
        indices, lines = self.indices, self._lines
        if len(lines) < len(indices):
            new = [line(history[index]) for index in indices[len(lines) :]]
            lines += new
            self._text += "".join([text + "\n" for text in new])
        return lines, self._text


# What readers get for a thread no message has started yet; never written to.

# What readers get for a thread no message has started yet; never written to.
EMPTY_THREAD = Thread()  # what a node nobody has written to reads (never modified)


def last_success(history: Sequence[HistoryEntry]) -> HistoryEntry | None:
    """The latest success entry of ``history``, if any."""
    for entry in reversed(history):
        if entry.state == "success":
            return entry
    return None


def run_answer(
    history: Iterable[HistoryEntry], rule_of: Callable[[str], MarkerRule] | None = None
) -> str | None:
    """A run's answer: what batch results, flow tests, ``roost show``, the Python API and
    the server report as what the run said.

    It is the content of the latest success message that still has text once a
    ``TERMINATE`` or ``INTERRUPT`` at its end (as its writer's ``markers`` rule reads
    one: ``rule_of(node)``, ``end`` by default) is taken off, with that marker taken
    off. A last message that is only ``TERMINATE`` marks the run's end: the message
    before it is the answer. None when no success message has text.
    """
    found = answer_entry(history, rule_of)
    return found[1] if found is not None else None


def answer_entry(
    history: Iterable[HistoryEntry], rule_of: Callable[[str], MarkerRule] | None = None
) -> tuple[HistoryEntry, str] | None:
    """The message that holds the run's answer (``run_answer``) and the answer's text."""
    entries = history if isinstance(history, list) else list(history)
    for entry in reversed(entries):
        if entry.state != "success":
            continue
        text = without_marker(entry.content, rule_of(entry.from_) if rule_of else "end")
        if text.strip():
            return entry, text
    return None


def without_marker(content: str, rule: MarkerRule = "end") -> str:
    """``content`` without the marker at its end, when ``rule`` reads one there (the text
    before it, trailing space trimmed); else ``content`` as written."""
    word = marker_in(content, rule)
    if word is None:
        return content
    stripped = content.rstrip()
    if not stripped.endswith(word):
        return content  # ``anywhere`` found it inside the text: nothing ends it
    return stripped[: -len(word)].rstrip()


def marker_rules(flow_text: str) -> Callable[[str], MarkerRule]:
    """How each node of the flow written in ``flow_text`` marks its replies: its own
    ``markers``, else ``defaults.markers``, else ``end`` (for a text that does not read)."""
    default, own = _marker_settings(flow_text)
    return lambda node: own.get(node, default)


_RULES = ("end", "whole", "anywhere")


@lru_cache(maxsize=64)
def _marker_settings(flow_text: str) -> tuple[MarkerRule, dict[str, MarkerRule]]:
    from roost.errors import FlowError
    from roost.flow.yamlread import build, compose  # bounded: a recorded text may be hostile

    try:
        data = build(compose(flow_text, "flow"), "flow").data if flow_text else {}
    except FlowError:
        data = {}
    defaults, agents = data.get("defaults"), data.get("agents")
    default = defaults.get("markers") if isinstance(defaults, dict) else None
    own: dict[str, MarkerRule] = {}
    for name, agent in agents.items() if isinstance(agents, dict) else ():
        rule = agent.get("markers") if isinstance(agent, dict) else None
        if rule in _RULES:
            own[str(name)] = rule
    return (default if default in _RULES else "end"), own
