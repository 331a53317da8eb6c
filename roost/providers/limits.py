"""Client-side limits of a provider, shared by every run of the process.

A provider entry may cap the requests it has in flight (``max_concurrency``)
and the requests and tokens it sends per minute (``requests_per_minute``,
``tokens_per_minute``). Every run of the process that calls the same endpoint
(kind, base URL, model) shares one ``Limiter``: a batch's rows, a server's
runs, the API's. The minute rates are leaky buckets from ``aiolimiter`` (the
requests' lets a second's worth through at once, the tokens' a minute's); the
concurrency cap is an ``asyncio.Semaphore``. A ``429`` with a retry-after
pauses the endpoint for every run of the process, not only the one that got it.

Several processes (workers on one database) each keep their own limits: a
server's share of a provider's quota is the provider's quota divided by its
workers.

A call waits for its turn before each attempt; how long it waited in all is
recorded on its ``llm_call`` event (``waited``) and reported to the observers
(the server's metrics).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from aiolimiter import AsyncLimiter

MINUTE = 60.0
CHARS_PER_TOKEN = 4  # a rough count of a request's tokens before it is sent


@dataclass
class Call:
    """One model call as the limits saw it: how long it waited for its turn in all."""

    provider: str
    request: Any = None  # the ModelRequest, sized for tokens_per_minute
    started: float = field(default_factory=time.monotonic)
    waited: float = 0.0
    failed: bool = False
    token: Any = None  # the context variable's, reset at the end


# The call the current task makes (set by the engine around ``Provider.complete``).
_call: ContextVar[Call | None] = ContextVar("roost_limited_call", default=None)
# Who hears of each call: (provider, seconds, waited, failed).
Observer = Callable[[str, float, float, bool], None]
observers: list[Observer] = []
# The calls waiting for their turn now, by provider name (the server's metrics show them,
# the batch's progress bar their sum) and by the run they are for (the server's run summary).
waiting: collections.Counter[str] = collections.Counter()
waiting_runs: collections.Counter[str] = collections.Counter()
# Told the provider's name when a call has to wait for its turn (``roost run`` says so).
waits_told: list[Callable[[str], None]] = []
# The run the current task steps, when its stepper named it (``for_run``).
_run: ContextVar[str | None] = ContextVar("roost_limited_run", default=None)


def for_run(run_id: str) -> None:
    """The calls the current task makes, and the tasks it starts, are ``run_id``'s."""
    _run.set(run_id)


def _count_waiting(provider: str, run: str | None, step: int) -> None:
    waiting[provider] += step
    if run is not None:
        waiting_runs[run] += step
        if waiting_runs[run] <= 0:
            del waiting_runs[run]  # the run's calls all went: no count kept for it


class Limiter:
    """The limits of one endpoint in this process."""

    def __init__(self) -> None:
        self.max_concurrency = 0
        self.requests_per_minute = 0
        self.tokens_per_minute = 0
        self.paused_until = 0.0  # monotonic time before which nothing is sent
        self.concurrency: asyncio.Semaphore | None = None
        self.requests: AsyncLimiter | None = None
        self.tokens: AsyncLimiter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def configure(self, max_concurrency: int | None, rpm: int | None, tpm: int | None) -> None:
        """Sets the limits the first entry that names them gives (later ones keep them)."""
        before = (self.max_concurrency, self.requests_per_minute, self.tokens_per_minute)
        self.max_concurrency = self.max_concurrency or max_concurrency or 0
        self.requests_per_minute = self.requests_per_minute or rpm or 0
        self.tokens_per_minute = self.tokens_per_minute or tpm or 0
        if before != (self.max_concurrency, self.requests_per_minute, self.tokens_per_minute):
            self._loop = None  # made again at the next turn, with these limits

    def _on_this_loop(self) -> None:
        """The primitives, made for the running loop (a process may run one loop after
        another: each ``asyncio.run`` of a command or a test)."""
        loop = asyncio.get_running_loop()
        if loop is self._loop:
            return
        self._loop = loop
        self.concurrency = asyncio.Semaphore(self.max_concurrency) if self.max_concurrency else None
        rpm, tpm = self.requests_per_minute, self.tokens_per_minute
        self.requests = requests_bucket(rpm) if rpm else None
        self.tokens = AsyncLimiter(tpm, MINUTE) if tpm else None

    def pause(self, seconds: float | None) -> None:
        """The endpoint said to wait (a 429's retry-after): every run waits that long."""
        if seconds:
            self.paused_until = max(self.paused_until, time.monotonic() + seconds)

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[float]:
        """Holds one of the endpoint's turns for an attempt; gives the seconds waited for it,
        which go on the call too."""
        self._on_this_loop()
        began = time.monotonic()
        held = False
        call = _call.get()
        shown = call.provider if call is not None else "?"
        run = _run.get()
        _count_waiting(shown, run, 1)
        # Whether a limit is reached now: a turn taken at once is no wait, however long a
        # busy machine takes to get through this code.
        must_wait = self._must_wait()
        if waits_told and must_wait:
            for told in list(waits_told):
                told(shown)
        try:
            if self.concurrency is not None:
                await self.concurrency.acquire()
                held = True
            if self.requests is not None:
                await self.requests.acquire()
            if self.tokens is not None:
                await self.tokens.acquire(self._size())
            await self._paused()  # checked last: a 429 may have come while this call waited
            _count_waiting(shown, run, -1)
            shown = ""
            waited = time.monotonic() - began if must_wait else 0.0
            _waited(waited)
            yield waited
        finally:
            if shown:
                _count_waiting(shown, run, -1)
            if held and self.concurrency is not None:
                self.concurrency.release()

    def _must_wait(self) -> bool:
        """Whether a call asking for a turn now waits for it (a limit is reached)."""
        return (
            (self.concurrency is not None and self.concurrency.locked())
            or (self.requests is not None and not self.requests.has_capacity())
            or (self.tokens is not None and not self.tokens.has_capacity(self._size()))
            or self.paused_until > time.monotonic()
        )

    async def _paused(self) -> None:
        """Returns once no retry-after holds the endpoint (one may follow another)."""
        while True:
            pause = self.paused_until - time.monotonic()
            if pause <= 0:
                return
            await asyncio.sleep(pause)

    def _size(self) -> float:
        """The current request's tokens, roughly (at most a minute's allowance)."""
        call = _call.get()
        request = call.request if call is not None else None
        if request is None:
            return 1.0
        chars = len(request.system) + sum(len(str(m.content or "")) for m in request.messages)
        return float(min(max(1, chars // CHARS_PER_TOKEN), self.tokens_per_minute))


def requests_bucket(rpm: int) -> AsyncLimiter:
    """A leaky bucket of ``rpm`` a minute that lets a second's worth go at once (one at
    least), not the whole minute's: a server's 429 usually counts shorter windows too."""
    burst = max(1, rpm // 60)
    return AsyncLimiter(burst, MINUTE * burst / rpm)


def _waited(seconds: float) -> None:
    call = _call.get()
    if call is not None and seconds > 0.001:  # a free turn is not a wait
        call.waited += seconds


_limiters: dict[tuple[str, str, str], Limiter] = {}


def limiter_for(config: Any) -> Limiter:
    """The process's limiter of the endpoint a provider entry names, its limits set."""
    key = (str(config.kind), str(config.base_url or ""), str(config.model))
    found = _limiters.get(key)
    if found is None:
        found = _limiters[key] = Limiter()
    found.configure(
        getattr(config, "max_concurrency", None),
        getattr(config, "requests_per_minute", None),
        getattr(config, "tokens_per_minute", None),
    )
    return found


@contextlib.asynccontextmanager
async def turn(limiter: Limiter | None) -> AsyncIterator[float]:
    """A turn of ``limiter`` (none to wait for without one); the seconds waited."""
    if limiter is None:
        yield 0.0
        return
    async with limiter.turn() as waited:
        yield waited


def begin(provider: str, request: Any) -> Call:
    """The engine starts a call through ``provider``: its waits are summed from here."""
    call = Call(provider, request)
    call.token = _call.set(call)
    return call


def end(call: Call) -> None:
    """The call ended (``failed`` set if it did): the observers hear of it."""
    with contextlib.suppress(ValueError):  # reset in another context (a cancelled task)
        _call.reset(call.token)
    elapsed = time.monotonic() - call.started
    for observer in list(observers):
        observer(call.provider, elapsed - call.waited, call.waited, call.failed)


def recorded_wait(call: Call | None) -> float | None:
    """The ``waited`` field of the call's ``llm_call``: seconds, None when it did not wait
    (or was not watched: ``call`` None)."""
    return round(call.waited, 3) if call is not None and call.waited else None
