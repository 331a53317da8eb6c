"""Who answers in a channel: the flow's person, named where a transcript tells of it.

When a member of a channel says INTERRUPT, the person answers; the event log
records that answer as coming from the channel (``resume`` and ``message``
from the channel to the member). A transcript names the person instead, as
``USER in room → critic``: the flow's one agent with ``interrupt: ALWAYS``, or
``you`` when the flow has none (or several).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

    from roost.events import Event, InterruptEvent, MessageEvent
    from roost.flow.models import Flow

YOU = "you"
ALWAYS = "ALWAYS"  # the interrupt policy of a person's agent


def the_person(people: Iterable[str]) -> str:
    """The one person of a flow (its agents with ``interrupt: ALWAYS``), else ``you``."""
    found = list(people)
    return found[0] if len(found) == 1 else YOU


@dataclass(frozen=True, slots=True)
class Answerer:
    """The flow's channels and its person, to name who answers in a channel."""

    channels: frozenset[str] = frozenset()
    person: str = YOU

    @classmethod
    def of_flow(cls, flow: Flow) -> Answerer:
        people = (name for name in flow.agents if flow.interrupt_of(name) == ALWAYS)
        return cls(frozenset(flow.channels), the_person(people))

    @classmethod
    def of_text(cls, text: str) -> Answerer:
        """From a flow's recorded text (a run's log keeps it); nothing known if unreadable."""
        from roost.errors import FlowError
        from roost.flow.yamlread import build, compose  # bounded: a recorded text may be hostile

        try:
            data: Any = build(compose(text, "flow"), "flow").data if text else None
        except FlowError:
            return cls()
        if not isinstance(data, dict):
            return cls()
        agents, defaults = _mapping(data, "agents"), _mapping(data, "defaults")
        fallback = defaults.get("interrupt")
        people = [
            str(name) for name, agent in agents.items() if _policy(agent, fallback) == "ALWAYS"
        ]
        return cls(frozenset(map(str, _mapping(data, "channels"))), the_person(people))

    def in_channel(self, channel: str) -> str:
        """Who answered in ``channel``: ``USER in room`` (or ``you in room``)."""
        return f"{self.person} in {channel}"

    def waited_for(self, event: InterruptEvent) -> str:
        """Whom an interrupt waits for: ``USER (in room)`` when a member said INTERRUPT."""
        if event.reason == "human" and event.from_ in self.channels:
            return f"{self.person} (in {event.from_})"
        return event.from_

    def sender(self, event: MessageEvent) -> str:
        """Who sent ``event``, naming the person for their answer in a channel."""
        return self.in_channel(event.from_) if self.answers(event) else event.from_

    def answers(self, event: MessageEvent) -> bool:
        """Whether ``event`` is the person's answer in a channel (from the channel to a member)."""
        return event.from_ in self.channels and event.background is None


NOBODY = Answerer()  # nothing known of the flow: no channel, the person is "you"


def _mapping(data: dict[str, Any], key: str) -> dict[Any, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _policy(agent: object, fallback: object) -> object:
    """An agent's ``interrupt`` as written, else the flow's default."""
    own = agent.get("interrupt") if isinstance(agent, dict) else None
    return own if own is not None else fallback


def answerers(events: Iterable[Event]) -> Iterable[tuple[Answerer, Event]]:
    """Each event with what its run's flow, at that point, says of who answers."""
    from roost.events import FlowEvent, RunStartEvent

    current = Answerer()
    for event in events:
        if isinstance(event, RunStartEvent | FlowEvent):
            current = Answerer.of_text(event.flow.text)
        yield current, event
