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


def role_context(flow: Flow, state: RunState, name: str, members: list[str]) -> dict[str, Any]:
    """What a role template may use: ``vars``, its node's ``name``, ``members`` and ``now``.

    ``now`` is the recorded time of the latest history entry rather than the clock, so
    that replaying a run renders the same prompt.
    """
    history = state.history
    now = history[-1].ts if history else ""
    return {"vars": flow.vars, "name": name, "members": members, "now": now}


def agent_system(flow: Flow, state: RunState, agent: str, to: str) -> str:
    """The agent's role rendered for a reply to ``to``."""
    source = flow.agents[agent].role
    if "{" not in source:
        return source
    channel = flow.channels.get(to)
    members = list(channel.members) if channel is not None else [agent, to]
    return render(source, **role_context(flow, state, agent, members))
