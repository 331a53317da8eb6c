"""Who judges a route: the live run calls its ``python`` conditions, a replay reads them.

A ``RouteJudge`` is asked, for the message with ``seq`` and the route at
``index`` of its writer's transitions entry, whether the route holds. Tests of
the text and the data are pure and judged alike everywhere; a ``python``
condition is imported and called by ``LiveRoutes``, and read back from the
recorded decision by ``roost.engine.recorded.decisions``, which never imports anything.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from roost.errors import RoostError
from roost.flow.models import flow_folder
from roost.flow.routes import holds

if TYPE_CHECKING:
    from roost.flow.models import Flow, Route


class RouteFailure(RoostError):
    """A ``python`` condition that could not be called or raised."""


class RouteJudge(Protocol):
    def __call__(self, seq: int, index: int, route: Route, text: str, data: Any) -> bool: ...


class LiveRoutes:
    """Judges routes as a run goes, importing ``python`` conditions from the flow's folder."""

    def __init__(self, flow: Flow) -> None:
        self._folder = flow_folder(flow)

    def __call__(self, seq: int, index: int, route: Route, text: str, data: Any) -> bool:
        return holds(route.when, text, data, self._python)

    def _python(self, target: str, text: str, data: Any) -> bool:
        from roost.tools.loader import load_callable  # only flows with such a condition

        try:
            return bool(load_callable(target, self._folder)(text, data))
        except Exception as exc:  # the author's code: its failure stops the run, not roost
            raise RouteFailure(f"python condition {target!r} failed: {exc}") from exc


def reply_data(text: str) -> Any:
    """The structured data of a reply written to a ``reply_format``: its JSON, else None."""
    try:
        return json.loads(text)
    except ValueError:
        return None
