"""Layout hints for big flows: invisible edges that keep a drawing about as tall as wide.

Graphviz puts every channel side by side and every loose agent on one line, so
thirty agents would make a picture many times wider than tall, whose text is
tiny once it fits a screen. These edges ask for rows instead; they carry no
meaning and are never shown.
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import TYPE_CHECKING

from roost.visualize import ids
from roost.visualize.dot_text import Attrs, add_edge

if TYPE_CHECKING:
    import graphviz

    from roost.flow.models import Flow

# Past this many members, member edges get staggered lengths so a channel wraps into rows.
STAGGER_AT = 6
# The run page's pane is about as tall as wide: there, channels wrap sooner.
PAGE_STAGGER_AT = 3
# Past this many agents, channels are stacked one under another.
STACK_AT = 12
# Past this many agents outside any channel, they are laid out in rows.
LOOSE_ROW = 6


def stagger(members: int, position: int, wrap_over: int = STAGGER_AT) -> int:
    """The length (in ranks) of the edge to a channel's member: 1, 2, 3, 1... in a channel
    of more than ``wrap_over`` members, so they wrap into three rows, not one long line."""
    return 1 + position % 3 if members > wrap_over else 1


def stack_channels(graph: graphviz.Digraph, flow: Flow, wrap_over: int = STAGGER_AT) -> None:
    """Adds invisible edges that put big channels one under another instead of side by side.

    Side by side, three channels of nine members make a picture five times wider than
    tall; stacked, it reads at full size.
    """
    if len(flow.agents) <= STACK_AT or len(flow.channels) < 2:
        return
    for upper, lower in pairwise(flow.channels):
        # One edge between directors, long enough to clear the upper channel's rows; it
        # carries no weight, so it neither pulls members about nor reorders them.
        rows = 3 if len(flow.channels[upper].members) > wrap_over else 1
        edge: Attrs = {"style": "invis", "weight": 0, "minlen": rows + 1}
        edge["id"] = f"stack-{ids.slug(upper)}-{ids.slug(lower)}"
        add_edge(graph, ids.node_id(upper), ids.node_id(lower), edge)


def _loose_agents(flow: Flow) -> list[str]:
    """Agents of no channel, in the order the flow declares them."""
    members = {m for channel in flow.channels.values() for m in channel.members}
    return [name for name in flow.agents if name not in members]


def in_grid(flow: Flow) -> bool:
    """Whether so many agents stand outside channels that they are laid out in rows."""
    return len(_loose_agents(flow)) > LOOSE_ROW


def grid_loose_agents(graph: graphviz.Digraph, flow: Flow) -> None:
    """Adds invisible edges that wrap many agents of no channel into rows instead of one long line.

    In a grid, the start route and message edges do not rank nodes (``constraint=false``),
    so the rows stay rows.
    """
    loose = _loose_agents(flow)
    if len(loose) <= LOOSE_ROW:
        return
    columns = math.ceil(math.sqrt(len(loose) * 2))
    if flow.start and {flow.start.from_, flow.start.to} <= set(loose):
        # The start route's sender heads the first column and its addressee stands just
        # below, so the start arrow points down like in a small flow.
        others = [n for n in loose if n not in (flow.start.from_, flow.start.to)]
        loose = [flow.start.from_, *others[: columns - 1], flow.start.to, *others[columns - 1 :]]
    for index in range(len(loose) - columns):
        upper, lower = loose[index], loose[index + columns]
        edge: Attrs = {"style": "invis", "id": f"grid-{ids.slug(upper)}"}
        add_edge(graph, ids.node_id(upper), ids.node_id(lower), edge)
