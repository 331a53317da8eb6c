"""Whether a route's condition holds of a reply, and how a condition reads in short.

A condition reads the reply just written, its marker taken off: its text
(``contains``, ``equals``, ``matches``) or its structured data (``field``,
dotted keys). A ``python`` condition is not called here: the caller passes
``python`` (the engine's live import, or a replay's record), so this module
stays a pure function of the reply.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from roost.flow.models import (
    ROUTE_END,
    AllCondition,
    AnyCondition,
    Condition,
    ContainsCondition,
    EqualsCondition,
    FieldCondition,
    MatchesCondition,
    NotCondition,
    PythonCondition,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from roost.events import Event, RouteRecord

_ABSENT = object()


def holds(
    condition: Condition | None,
    text: str,
    data: Any,
    python: Callable[[str, str, Any], bool],
) -> bool:
    """Whether ``condition`` holds of a reply with ``text`` (marker off) and ``data``."""
    if condition is None:
        return True
    if isinstance(condition, ContainsCondition):
        return condition.contains in text
    if isinstance(condition, EqualsCondition):
        return text.strip() == condition.equals
    if isinstance(condition, MatchesCondition):
        return _regex(condition.matches).search(text) is not None
    if isinstance(condition, FieldCondition):
        return _field_holds(condition, data)
    if isinstance(condition, PythonCondition):
        return python(condition.python, text, data)
    if isinstance(condition, AllCondition):
        return all(holds(item, text, data, python) for item in condition.all)
    if isinstance(condition, AnyCondition):
        return any(holds(item, text, data, python) for item in condition.any)
    return not holds(condition.not_, text, data, python)


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def value_at(data: Any, dotted: str) -> Any:
    """The value at the dotted path in ``data``; ``_ABSENT`` when a key is missing."""
    node = data
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return _ABSENT
        node = node[key]
    return node


def _field_holds(condition: FieldCondition, data: Any) -> bool:
    value = value_at(data, condition.field)
    if value is _ABSENT:
        return False
    written = condition.model_fields_set
    if "equals" in written:
        return _same(value, condition.equals)
    if condition.in_ is not None:
        return any(_same(value, item) for item in condition.in_)
    if condition.matches is not None:
        return isinstance(value, str) and _regex(condition.matches).search(value) is not None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if condition.gt is not None:
        return number and value > condition.gt
    if condition.lt is not None:
        return number and value < condition.lt
    return False


def _same(value: Any, wanted: Any) -> bool:
    """Equal as JSON values are: true is not 1, and 1 is 1.0."""
    return bool(value == wanted) and isinstance(value, bool) == isinstance(wanted, bool)


def has_python(condition: Condition | None) -> bool:
    """Whether a ``python`` condition is anywhere inside ``condition``."""
    if condition is None:
        return False
    if isinstance(condition, PythonCondition):
        return True
    if isinstance(condition, AllCondition):
        return any(has_python(item) for item in condition.all)
    if isinstance(condition, AnyCondition):
        return any(has_python(item) for item in condition.any)
    if isinstance(condition, NotCondition):
        return has_python(condition.not_)
    return False


def short_label(condition: Condition | None) -> str:
    """The condition in short: ``verdict = revise``, ``matches /published/``, ``always``."""
    if condition is None:
        return "always"
    if isinstance(condition, ContainsCondition):
        return f"contains “{condition.contains}”"
    if isinstance(condition, EqualsCondition):
        return f"says “{condition.equals}”"
    if isinstance(condition, MatchesCondition):
        return f"matches /{condition.matches}/"
    if isinstance(condition, FieldCondition):
        return _field_label(condition)
    if isinstance(condition, PythonCondition):
        return f"python {condition.python}"
    if isinstance(condition, AllCondition):
        return " and ".join(_grouped(item) for item in condition.all)
    if isinstance(condition, AnyCondition):
        return " or ".join(_grouped(item) for item in condition.any)
    return f"not {_grouped(condition.not_)}"


def _grouped(condition: Condition) -> str:
    text = short_label(condition)
    return f"({text})" if isinstance(condition, AllCondition | AnyCondition) else text


def _field_label(condition: FieldCondition) -> str:
    name = condition.field
    if "equals" in condition.model_fields_set:
        return f"{name} = {_plain(condition.equals)}"
    if condition.in_ is not None:
        return f"{name} in {{{', '.join(_plain(v) for v in condition.in_)}}}"
    if condition.matches is not None:
        return f"{name} matches /{condition.matches}/"
    if condition.gt is not None:
        return f"{name} > {condition.gt:g}"
    if condition.lt is not None:
        return f"{name} < {condition.lt:g}"
    return name


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def data_text(data: Any) -> str:
    """A structured reply's fields on one line, ``verdict: revise · notes: say where``."""
    if not isinstance(data, dict):
        return json.dumps(data, ensure_ascii=False)
    parts = []
    for key, value in data.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}: {shown}")
    return " · ".join(parts)


def routes_taken(routes: Sequence[RouteRecord] | None, chosen: str | None = None) -> str:
    """The routes that held (to ``chosen`` when given) in short, ``verdict = revise``; ''."""
    held = [r for r in routes or () if r.held and (chosen is None or r.to == chosen)]
    return ", ".join(r.when for r in held)


ARROW = "→"  # between a route's writer and its target: ``critic→editor``


@dataclass(frozen=True, slots=True)
class TakenRoute:
    """A conditional route a run took: after ``source`` wrote into ``channel``, to ``to``.

    ``index`` is the route's place among ``source``'s conditional routes (as the
    decision records them), ``when`` its condition in short, ``seq`` the event
    (select or terminate) that took it.
    """

    channel: str
    source: str
    to: str
    index: int
    when: str
    seq: int

    @property
    def name(self) -> str:
        """``critic→editor``: how tests and people name it."""
        return f"{self.source}{ARROW}{self.to}"


def route_name(text: str) -> tuple[str, str] | None:
    """``("critic", "editor")`` of ``critic→editor`` (or ``critic->editor``); None otherwise."""
    source, arrow, to = text.replace("->", ARROW).partition(ARROW)
    if not arrow or not source.strip() or not to.strip() or ARROW in to:
        return None
    return source.strip(), to.strip()


def taken_routes(events: Iterable[Event]) -> list[TakenRoute]:
    """The conditional routes a run took, in order (a plain successor chosen is none)."""
    from roost.events import MessageEvent

    latest: dict[str, str] = {}  # channel -> who wrote into it last
    taken = []
    for event in events:
        if isinstance(event, MessageEvent):
            latest[event.to] = event.from_
            continue
        decided = _decided(event)
        if decided is None or decided[0] not in latest:
            continue
        channel, to, routes = decided
        for index, record in enumerate(routes):
            if record.held and record.to == to:
                source = latest[channel]
                taken.append(TakenRoute(channel, source, to, index, record.when, event.seq))
                break
    return taken


def _decided(event: Event) -> tuple[str, str, Sequence[RouteRecord]] | None:
    """The channel, the target and the judged routes of a routed choice or end; else None."""
    from roost.events import SelectEvent, TerminateEvent

    if isinstance(event, SelectEvent) and event.routes:
        return event.channel, event.chosen, event.routes
    if isinstance(event, TerminateEvent) and event.routes and event.reason == "route":
        return event.node, ROUTE_END, event.routes
    return None
