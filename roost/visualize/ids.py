"""Stable element ids shared by the DOT text and the run page.

Node and edge names come from the flow author and may hold any character, so
every id spells a name with letters and digits only: any other character
becomes ``_<hex>_``. The spelling is injective (``_`` itself is escaped), so two
names never share an id, and the page can find an element from a name.
"""

from __future__ import annotations


def slug(name: str) -> str:
    """``name`` spelt with ASCII letters, digits and ``_<hex>_`` escapes only."""
    out: list[str] = []
    for char in name:
        if char.isascii() and char.isalnum():
            out.append(char)
        else:
            out.append(f"_{ord(char):x}_")
    return "".join(out)


def node_id(name: str) -> str:
    """The id of an agent's node, or of a channel's director node."""
    return f"node-{slug(name)}"


def member_edge_id(channel: str, agent: str) -> str:
    """The edge joining a channel's director to one of its members."""
    return f"member-{slug(channel)}-{slug(agent)}"


def transition_edge_id(channel: str, source: str, target: str) -> str:
    """A ``transitions`` edge: ``target`` may speak after ``source`` in ``channel``."""
    return f"transition-{slug(channel)}-{slug(source)}-{slug(target)}"


def message_edge_id(source: str, target: str) -> str:
    """An edge drawn for messages that went from one node straight to another."""
    return f"message-{slug(source)}-{slug(target)}"


START_NODE_ID = "start"
START_EDGE_ID = "start-route"
STATE_NODE_ID = "run-state"


def route_edge_id(channel: str, source: str, position: int) -> str:
    """A conditional route: entry ``position`` of ``source``'s transitions in ``channel``."""
    return f"route-{slug(channel)}-{slug(source)}-{position}"


def route_end_id(channel: str, source: str, position: int) -> str:
    """The end mark a route to TERMINATE leads to."""
    return f"route-end-{slug(channel)}-{slug(source)}-{position}"
