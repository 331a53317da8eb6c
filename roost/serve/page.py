"""The page at ``/``: one self-contained HTML file (no CDN) that drives runs through the API.

Its script and stylesheet are inlined, as are the replay page's stylesheet and
the drawing code it shares; the graph of a flow comes from ``GET
/flows/graph``. It loads nothing from elsewhere.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def page_html() -> str:
    return resources.files("roost.serve").joinpath("page.html").read_text(encoding="utf-8")
