"""The decisions a replay reads from the record: each hook's, each ``python`` route's.

No hook is run and no route condition is imported or called: a hook decides as
its recorded ``hook`` event says, a ``python`` condition holds exactly when the
recorded decision that judged it says so. Routes that test the text or the data
are pure and judged again (an edited flow's routes may then decide otherwise,
and the replay diverges at that decision).
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import TYPE_CHECKING, Any

from roost.errors import RoostError
from roost.events import HookEvent, InterruptEvent, MessageEvent, SelectEvent, TerminateEvent
from roost.flow.routes import has_python, holds

if TYPE_CHECKING:
    from collections.abc import Sequence

    from roost.engine.hooks import AskedHook
    from roost.engine.sources import RunPosition
    from roost.events import Event
    from roost.flow.models import Route
    from roost.tools.hooks import Decision, Stage


class RecordedHooks:
    """``hooks(node, stage)`` for a replay: each hook decides as the record says it did."""

    def __init__(self, recorded: Sequence[Event]) -> None:
        self._run: RunPosition | None = None
        self.decisions: dict[tuple[str, str, str, str | None], deque[HookEvent]] = defaultdict(
            deque
        )
        for event in recorded:
            if isinstance(event, HookEvent):
                key = (event.node, event.stage, event.hook, event.tool_call)
                self.decisions[key].append(event)

    def bind(self, run: RunPosition) -> None:
        self._run = run

    def __call__(self, node: str, stage: str) -> Sequence[AskedHook]:
        if self._run is None:
            raise RoostError("recorded hooks answer a run: bind them to it first")
        flow = self._run.flow
        configs = flow.hooks_of(node, stage)
        if not configs:
            return ()
        from roost.flow.redact import Redactor
        from roost.tools.hooks import hook_name

        redact = Redactor(flow.secrets)
        return [RecordedHook(redact(hook_name(config)), node, self) for config in configs]


class RecordedHook:
    """A declared hook whose decisions come from the record; nothing is run."""

    def __init__(self, name: str, node: str, source: RecordedHooks) -> None:
        self.name = name
        self._node = node
        self._source = source

    async def decide(self, stage: Stage, call: dict[str, Any]) -> Decision:
        from roost.tools.hooks import Decision

        key = (self._node, stage, self.name, call.get("id"))
        waiting = self._source.decisions.get(key)
        if not waiting:
            return Decision("refuse", reason=f"replay: no recorded decision of hook {self.name}")
        event = waiting.popleft()
        return Decision(event.decision, event.reason, event.arguments, event.content)


class RecordedRoutes:
    """Judges routes as the recorded run did: a route with a ``python`` condition held
    exactly when the record says so; the others are judged again (an edited flow's
    routes may then decide otherwise, and the replay diverges at that select)."""

    def __init__(self, recorded: Sequence[Event]) -> None:
        self._held: dict[int, tuple[bool, ...]] = {}
        latest: dict[str, int] = {}  # the latest message into each node, by its seq
        for event in recorded:
            if isinstance(event, MessageEvent):
                latest[event.to] = event.seq
            routes, node = _decision(event)
            if routes is not None and node in latest:
                self._held.setdefault(latest[node], tuple(r.held for r in routes))

    def __call__(self, seq: int, index: int, route: Route, text: str, data: Any) -> bool:
        if not has_python(route.when):
            return holds(route.when, text, data, _never)
        held = self._held.get(seq, ())
        return held[index] if index < len(held) else False


def _decision(event: Event) -> tuple[Any, str]:
    if isinstance(event, SelectEvent):
        return event.routes, event.channel
    if isinstance(event, TerminateEvent):
        return event.routes, event.node
    if isinstance(event, InterruptEvent):
        return event.routes, event.from_
    return None, ""


def _never(target: str, text: str, data: Any) -> bool:
    raise AssertionError(f"a replay called python condition {target!r}")  # pragma: no cover
