"""Flows and runs in Jupyter: a flow shows as its graph, a run as its run page.

``roost.show(item)`` gives an object a notebook displays: for a ``Flow``, its
drawing (``_repr_svg_``); for a run (a ``Runner``, a log, or a run's events),
the run page inline (``_repr_html_``) and the run drawn over its flow
(``_repr_svg_``, for frontends that show no HTML). In IPython, importing roost
registers the same displays for flows, Runners and logs themselves, so a cell
that ends with ``flow`` or ``runner`` shows the drawing.

This module sits at the top, beside ``roost.api``: it reads runs through the
engine and draws them with ``roost.visualize``, both imported when a drawing
is asked for, never by importing roost.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from roost.errors import EventLogError, UsageError

if TYPE_CHECKING:
    from roost.events import Event
    from roost.flow import Flow

# The height of the run page inside a notebook's output, in CSS pixels.
PAGE_HEIGHT = 640

# The types displayed in IPython without roost.show, by module and name (registered
# without importing them: the formatter looks them up when an object of the type shows).
# The module is the one the class is defined in (its __module__), not one that re-exports it.
_FLOWS = (("roost.flow.models.root", "Flow"),)
_RUNS = (
    ("roost.engine.runner", "Runner"),
    ("roost.ports", "MemoryLog"),
    ("roost.store.jsonl", "JsonlLog"),
    ("roost.store.sqllog", "SqlLog"),
)


class FlowDrawing:
    """A flow's graph, as a notebook shows it."""

    def __init__(self, flow: Flow) -> None:
        self.flow = flow

    def _repr_svg_(self) -> str:
        from roost.visualize import flow_graph
        from roost.visualize.dot_program import svg_markup

        return svg_markup(flow_graph(self.flow))

    def __repr__(self) -> str:
        return f"<FlowDrawing of {self.flow.name}>"


class RunDrawing:
    """A run as a notebook shows it: its run page, or its drawing over the flow."""

    def __init__(self, flow: Flow, events: Sequence[Event]) -> None:
        self.flow = flow
        self.events = list(events)

    def _repr_html_(self) -> str:
        """The run page in a frame of its own, so its styles and script touch nothing else."""
        from roost.visualize import run_page_html

        page = html.escape(run_page_html(self.flow, self.events), quote=True)
        title = html.escape(f"replay of {self.flow.name}", quote=True)
        return (
            f'<iframe srcdoc="{page}" title="{title}" '
            f'style="width: 100%; height: {PAGE_HEIGHT}px; border: 1px solid #d0d7de">'
            "</iframe>"
        )

    def _repr_svg_(self) -> str:
        from roost.visualize import flow_graph
        from roost.visualize.dot_program import svg_markup

        return svg_markup(flow_graph(self.flow, self.events))

    def __repr__(self) -> str:
        run = self.events[0].run if self.events else "no events"
        return f"<RunDrawing of {self.flow.name}, run {run}>"


def show(item: Any) -> FlowDrawing | RunDrawing:
    """What a notebook displays for ``item``: a ``Flow``, a ``Runner``, a log or a run's events.

    A run is drawn under the flow it follows (its latest ``flow`` event's, else its
    ``run_start``'s). Raises UsageError for anything else.
    """
    from roost.engine import Runner
    from roost.flow import Flow
    from roost.ports import EventLog

    if isinstance(item, Flow):
        return FlowDrawing(item)
    if isinstance(item, Runner):
        return RunDrawing(item.flow, item.log.load())
    if isinstance(item, EventLog):
        return run_drawing(item.load(), item.run_id)
    if isinstance(item, Sequence) and not isinstance(item, str):
        return run_drawing(list(item), "the events")
    raise UsageError(
        f"roost.show draws a Flow, a Runner, a log or a run's events, not {type(item).__name__}"
    )


def run_drawing(events: list[Event], ref: str) -> RunDrawing:
    """A run's drawing under the flow its events recorded; EventLogError when they hold none."""
    from roost.engine.flows import flow_in_force
    from roost.flow import load_recorded_flow

    record = flow_in_force(events)
    if record is None:
        raise EventLogError(f"{ref}: the run has no run_start event, so no flow to draw")
    return RunDrawing(load_recorded_flow(record.text, record.path), events)


def register(shell: Any) -> None:
    """Displays flows, Runners and logs in an IPython ``shell`` as ``roost.show`` does."""
    formatters = shell.display_formatter.formatters
    for module, name in _FLOWS:
        formatters["image/svg+xml"].for_type_by_name(module, name, _flow_svg)
    for module, name in _RUNS:
        formatters["text/html"].for_type_by_name(module, name, _run_html)
        formatters["image/svg+xml"].for_type_by_name(module, name, _run_svg)


def load_ipython_extension(shell: Any) -> None:
    """``%load_ext roost.notebook``: the displays, for a shell that imported roost before."""
    register(shell)


def _flow_svg(flow: Flow) -> str:
    return FlowDrawing(flow)._repr_svg_()


def _run_html(item: Any) -> str | None:
    drawing = _run(item)
    return None if drawing is None else drawing._repr_html_()


def _run_svg(item: Any) -> str | None:
    drawing = _run(item)
    return None if drawing is None else drawing._repr_svg_()


def _run(item: Any) -> RunDrawing | None:
    """The drawing of a Runner's or a log's run; None for a log that holds no run yet."""
    try:
        drawing = show(item)
    except EventLogError:
        return None  # the notebook shows the object's plain repr instead
    return drawing if isinstance(drawing, RunDrawing) else None
