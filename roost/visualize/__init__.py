"""Drawing flows and runs: DOT text, files through Graphviz, and the replay page.

``flow_to_dot(flow, events=None)`` and ``replay_html(flow, events)`` are pure
(they return text); ``write_render`` writes any supported format to a file.
"""

from roost.visualize.dot import flow_to_dot
from roost.visualize.output import write_render
from roost.visualize.replay_page import replay_html

__all__ = ["flow_to_dot", "replay_html", "write_render"]
