"""What the notebook tests read in a drawing."""

from __future__ import annotations

import html

from roost.visualize.ids import slug


def node_titles(svg: str) -> set[str]:
    """The ids of the nodes Graphviz drew (each node's <title>)."""
    titles = set()
    for part in svg.split('class="node"')[1:]:
        titles.add(html.unescape(part.split("<title>")[1].split("</title>")[0]))
    return titles


# The picnic's nodes, as the drawing names them.
NODES = {f"node-{slug(name)}" for name in ("USER", "scout", "cook", "planning")}
