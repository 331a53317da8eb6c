"""What ``GET /metrics`` tells operators, in the Prometheus text format (``prometheus_client``).

Counters are this worker's since it started: steps taken, model calls (by
provider and outcome), their latency, tokens and cost (by provider and flow),
waits for the providers' limits. Gauges are read at each scrape: the runs of
the store by status, the messages queued for them, the runs this worker steps,
the streams open, and whether it takes work. Each worker of a database reports
its own; the store-wide gauges are the same from every worker (sum the counters
across workers, not those).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sized
from typing import TYPE_CHECKING, Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from roost.pricing import cost_of
from roost.providers import limits
from roost.store.leases import INBOX
from roost.store.schema import RUNS

if TYPE_CHECKING:
    from roost.events import Event, LlmCallEvent
    from roost.flow import Flow
    from roost.serve._broadcast import Broadcast
    from roost.store.sql import SqlStore


class Hub(Protocol):
    """What the metrics read of a server's hub."""

    @property
    def store(self) -> SqlStore: ...
    @property
    def sessions(self) -> Sized: ...  # the runs it steps now
    @property
    def accepting(self) -> bool: ...
    @property
    def broadcast(self) -> Broadcast: ...  # the streams open


CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class ServeMetrics:
    """One worker's metrics: counted as its runs go, gauges read at each scrape."""

    def __init__(self, hub: Hub) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        reg = self.registry
        self.steps = Counter("roost_steps", "Steps this worker took.", ["flow"], registry=reg)
        self.calls = Counter(
            "roost_model_calls", "Model calls, by outcome.", ["provider", "outcome"], registry=reg
        )
        self.errors = Counter(
            "roost_model_errors", "Model calls that failed.", ["provider"], registry=reg
        )
        self.latency = Histogram(
            "roost_model_call_seconds",
            "Seconds a model call took, its wait for the provider's limits left out.",
            ["provider"],
            buckets=LATENCY_BUCKETS,
            registry=reg,
        )
        self.tokens = Counter(
            "roost_tokens",
            "Tokens of model calls (kind: prompt or completion).",
            ["provider", "flow", "kind"],
            registry=reg,
        )
        self.cost = Counter(
            "roost_cost_dollars",
            "US dollars model calls cost (as priced; unpriced calls add nothing).",
            ["provider", "flow"],
            registry=reg,
        )
        self.waits = Counter(
            "roost_limit_waits", "Model calls that waited for a limit.", ["provider"], registry=reg
        )
        self.wait_seconds = Counter(
            "roost_limit_wait_seconds",
            "Seconds model calls waited for their provider's limits.",
            ["provider"],
            registry=reg,
        )
        reg.register(_Live(hub))

    def start(self) -> None:
        """Hears of every model call of this process from now on."""
        limits.observers.append(self.call_ended)

    def stop(self) -> None:
        if self.call_ended in limits.observers:
            limits.observers.remove(self.call_ended)

    def call_ended(self, provider: str, seconds: float, waited: float, failed: bool) -> None:
        self.calls.labels(provider, "error" if failed else "ok").inc()
        if failed:
            self.errors.labels(provider).inc()
        self.latency.labels(provider).observe(max(seconds, 0.0))
        if waited:
            self.waits.labels(provider).inc()
            self.wait_seconds.labels(provider).inc(waited)

    def stepped(self, flow: Flow) -> None:
        self.steps.labels(flow.name).inc()

    def event(self, event: Event, flow: Flow | None) -> None:
        """Counts the tokens and cost of an ``llm_call`` a run of this worker recorded."""
        if event.type != "llm_call" or flow is None:
            return
        call: LlmCallEvent = event  # type: ignore[assignment]
        usage = call.usage
        if usage is None or not (usage.prompt_tokens or usage.completion_tokens):
            return
        self.tokens.labels(call.provider, flow.name, "prompt").inc(usage.prompt_tokens)
        self.tokens.labels(call.provider, flow.name, "completion").inc(usage.completion_tokens)
        amount = cost_of(usage, flow.providers.get(call.provider), model=call.model).amount
        if amount:
            self.cost.labels(call.provider, flow.name).inc(amount)

    def text(self) -> bytes:
        """The exposition (reads the store: call it in a thread)."""
        return generate_latest(self.registry)


class _Live(Collector):
    """The gauges read when scraped."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub

    def collect(self) -> Iterator[Metric]:
        hub = self.hub
        runs = GaugeMetricFamily("roost_runs", "Runs in the store, by status.", labels=["status"])
        for status, count in self._grouped():
            runs.add_metric([status], count)
        yield runs
        yield _gauge("roost_queue_depth", "Messages waiting for runs.", self._queued)
        yield _gauge("roost_runs_stepping", "Runs stepped here now.", lambda: len(hub.sessions))
        yield _gauge(
            "roost_streams_open", "Streams (SSE, WebSocket) open.", hub.broadcast.streams_open
        )
        yield _gauge("roost_ready", "1 while this worker takes new work.", lambda: hub.accepting)
        waiting = GaugeMetricFamily(
            "roost_limit_waiting", "Model calls waiting for a limit now.", labels=["provider"]
        )
        for provider, count in sorted(limits.waiting.items()):
            waiting.add_metric([provider], count)
        yield waiting

    def _grouped(self) -> list[tuple[str, int]]:
        query = select(RUNS.c.status, func.count()).group_by(RUNS.c.status)
        with self.hub.store.translate("read"), self.hub.store.engine.connect() as conn:
            return [(str(row[0]), int(row[1])) for row in conn.execute(query)]

    def _queued(self) -> int:
        query = select(func.count()).select_from(INBOX)
        with self.hub.store.translate("read"), self.hub.store.engine.connect() as conn:
            return int(conn.execute(query).scalar() or 0)


def _gauge(name: str, text: str, read: Callable[[], Any]) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, text, value=float(read()))
