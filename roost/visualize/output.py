"""Writing drawings to files: ``.dot`` as text, ``.svg``/``.png``/``.pdf`` laid out by
Graphviz's ``dot`` program, ``.html`` as the run page.

``flow_graph`` and ``run_page_html`` build the drawing, ``dot_program`` runs ``dot``
for them; this module is the only place that writes a file.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from roost.errors import RoostError, UsageError
from roost.visualize.dot import flow_graph
from roost.visualize.dot_program import INSTALL_GRAPHVIZ, run_dot
from roost.visualize.run_page import run_page_html

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from roost.events import Event
    from roost.flow.models import Flow
    from roost.ports import ImageStore

__all__ = ["FORMATS", "INSTALL_GRAPHVIZ", "output_format", "render_bytes", "write_render"]

FORMATS = (".dot", ".svg", ".png", ".pdf", ".html")


def output_format(path: Path) -> str:
    """The format a file name asks for (``dot``, ``svg``, ``png``, ``pdf``, ``html``)."""
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        shown = suffix or "no suffix"
        raise UsageError(
            f"cannot render to {path.name} ({shown}): use a name ending in "
            + ", ".join(FORMATS[:-1])
            + f" or {FORMATS[-1]}"
        )
    return suffix[1:]


def render_bytes(
    flow: Flow, events: Sequence[Event] | None, fmt: str, images: ImageStore | None = None
) -> bytes:
    """The drawing of ``flow`` (and a run, whose images ``images`` keeps) in ``fmt``, as bytes."""
    if fmt == "html":
        return run_page_html(flow, list(events or []), images).encode("utf-8")
    graph = flow_graph(flow, events)
    if fmt == "dot":
        source: str = graph.source
        return source.encode("utf-8")
    return run_dot(graph, fmt)


def write_render(
    flow: Flow, events: Sequence[Event] | None, out: Path, images: ImageStore | None = None
) -> Path:
    """Draws ``flow`` (and a run) into ``out``, its format taken from the suffix."""
    data = render_bytes(flow, events, output_format(out), images)
    temporary = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(data)
        temporary.replace(out)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise RoostError(f"cannot write {out}: {exc.strerror or exc}") from exc
    return out
