"""Drawing flows and runs: DOT text, files through Graphviz, and the run page.

``flow_graph(flow, events=None)`` builds the drawing as a ``graphviz.Digraph``,
``flow_to_dot`` gives its DOT text and ``run_page_html(flow, events)`` the replay
page; none writes a file. ``write_render`` writes any supported format to one.
The graphviz package is loaded by the first drawing, not by this import.
"""

from roost.visualize.dot import flow_graph, flow_to_dot
from roost.visualize.output import write_render
from roost.visualize.run_page import run_page_html

__all__ = ["flow_graph", "flow_to_dot", "run_page_html", "write_render"]
