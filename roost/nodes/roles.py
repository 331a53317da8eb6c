"""Renders roles and prompts with the flow language's sandboxed Jinja2 environment."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from roost.flow.models import Flow
    from roost.runstate import RunState


def render(source: str, **context: Any) -> str:
    """``source`` rendered with ``context``; a source with no template syntax is returned as is."""
    if "{" not in source:
        return source
    from roost.templating import render_template  # Jinja2, for the first text that needs it

    return render_template(source, **context)


def role_context(
    flow: Flow, state: RunState, name: str, members: list[str], to: str
) -> dict[str, Any]:
    """What a role template may use: ``vars``, its node's ``name``, ``members``, ``now``
    and ``last``, the latest message ``name`` sees when it answers ``to`` (a channel
    answering for itself: ``to`` is the channel).

    ``now`` is the recorded time of the latest history entry rather than the clock, so
    that replaying a run renders the same prompt.
    """
    history = state.history
    now = history[-1].ts if history else ""
    last = last_seen(flow, state, name, to)
    return {"vars": flow.vars, "name": name, "members": members, "now": now, "last": last}


def last_seen(flow: Flow, state: RunState, node: str, to: str) -> dict[str, Any] | None:
    """The latest success message of ``node``'s view when it answers ``to``, as a
    template reads it (``from``, ``to``, ``content``, ``data``); None before any.

    Into a channel (or a channel's director) that is the channel's latest message,
    read from the flow: the run's state knows a channel only once it has chosen.
    """
    thread = state.inbox_of(to) if to in flow.channels else state.pair_thread(node, to)
    indices = thread.indices
    if not indices:
        return None
    entry = state.history[indices[-1]]
    data = getattr(entry, "data", None)
    return {"from": entry.from_, "to": entry.to, "content": entry.content, "data": data}


def agent_system(flow: Flow, state: RunState, agent: str, to: str) -> str:
    """The agent's role rendered for a reply to ``to``."""
    source = flow.agents[agent].role
    if "{" not in source:
        return source
    channel = flow.channels.get(to)
    members = list(channel.members) if channel is not None else [agent, to]
    return render(source, **role_context(flow, state, agent, members, to))
