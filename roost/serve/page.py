"""The page at ``/``: one self-contained HTML file (no CDN) that drives runs through the API.

Its script and stylesheet are inlined, the run page's stylesheet and the words
its script shares with the run page's (``roost/visualize/event_words.js``) with
them: the transcript's rows, their wording and the graph's highlight are the same
in both. The graph of a run's flow comes from ``GET /runs/{id}/graph``, drawn by
the same code as the run page's. The page loads nothing from elsewhere. Under
``roost studio`` the studio's view, script and stylesheet (``roost/studio/``)
are inlined as well: one page, whose home is the studio and whose runs are the
server's own run view.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from roost.flow import Flow

_PLACEHOLDER = re.compile(r"@@ROOST_(REPLAY_CSS|CSS|JS|STUDIO_CSS|STUDIO_HTML|STUDIO_JS)@@")


@cache
def page_html(studio: bool = False) -> str:
    """The page; ``roost studio``'s has the studio's view in it too (its home)."""
    parts = {
        "REPLAY_CSS": _asset("roost.visualize", "run_page.css"),
        "CSS": _asset("roost.serve", "page.css"),
        # One script: the words it shares with the run page, then its own.
        "JS": _asset("roost.visualize", "event_words.js") + _asset("roost.serve", "page.js"),
        "STUDIO_CSS": _asset("roost.studio", "studio.css") if studio else "",
        "STUDIO_HTML": _asset("roost.studio", "studio.html") if studio else "",
        "STUDIO_JS": _asset("roost.studio", "studio.js") if studio else "",
    }
    return _PLACEHOLDER.sub(lambda match: parts[match.group(1)], _asset("roost.serve", "page.html"))


def graph_svg(flow: Flow) -> str:
    """The drawing of ``flow`` as the run page draws it, as SVG to inline in the page."""
    from roost.visualize.dot import flow_graph
    from roost.visualize.run_page import inline_svg

    return inline_svg(flow_graph(flow, title=False, mark_final=False, for_page=True))


def _asset(package: str, name: str) -> str:
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")
