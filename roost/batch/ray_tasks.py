"""Running a batch's rows as Ray tasks: each row a task, each task an ordinary stored run.

This process (the driver) keeps ``concurrency`` rows in flight on the cluster
and counts each result as it comes back. A task gets plain data: the row, its
run id, the flow's text (the row's vars written in) and where the store is;
the worker checks the flow itself, so the environment variables a flow uses
are read where the workers run, and are never a task's argument.

A worker that dies mid-row (killed, out of memory, its node lost) is a system
failure Ray retries on another worker. The retried task goes through
``run_row`` like any run of the row: it finds the row's run in the store and
resumes it from its log, so nothing is run twice. A row whose task fails every
try is an ``error`` row, retried from its log by the next ``roost batch``.

Ray is an optional dependency (``pip install 'roost[ray]'``): it is imported
here only, when ``--ray`` is given.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import signal
import socket
import time
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from roost.batch.inputs import Row
from roost.batch.plan import Plan, describe
from roost.batch.rows import RowResult, run_row
from roost.errors import RoostError, UsageError
from roost.store.sql import SqlStore
from roost.store.urls import resolve_url
from roost.workspace import Workspace

if TYPE_CHECKING:
    from collections.abc import Callable

    from roost.batch.drain import Drain
    from roost.batch.session import Runs
    from roost.flow.models import Flow

_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Ray colours its errors' text
LOCAL = "local"  # --ray without an address: a Ray instance of this machine, started for the batch
LOST_RETRIES = 3  # times Ray retries a row whose worker died
CONNECT_TIMEOUT = 5.0  # seconds to reach a cluster's address before saying it cannot be reached
INSTALL_HINT = "pip install 'roost[ray]'"
POLL_SECONDS = 0.5  # how often the driver looks whether SIGTERM came while rows run


def import_ray() -> Any:
    """The ``ray`` module; a UsageError saying how to install it when it is not installed."""
    try:
        import ray
    except ImportError:
        raise UsageError(f"--ray: Ray is not installed; install it with: {INSTALL_HINT}") from None
    return ray


def store_url_for(address: str, db: str | None) -> str:
    """The store's URL as every worker can open it; UsageError for SQLite on a remote cluster.

    A SQLite file is on this machine's disk: only workers on this machine can
    share it, so SQLite goes with a Ray of this machine alone (no address, or one
    on a loopback address) and its path is made absolute (workers run elsewhere).
    """
    url = resolve_url(db)
    if not url.startswith("sqlite:///"):
        return url
    if not is_local(address):
        raise UsageError(
            f"--ray {address}: a SQLite store cannot be shared by a cluster's machines; "
            "give a PostgreSQL store with --db"
        )
    path = url.removeprefix("sqlite:///")
    return f"sqlite:///{Path(path).resolve()}" if path else url


def is_local(address: str) -> bool:
    """True for a Ray of this machine: started for the batch, or at a loopback address."""
    if address == LOCAL:
        return True
    if address == "auto":  # the cluster this machine is in: perhaps of several machines
        return False
    host = _host_port(address)[0]
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_reachable(address: str) -> None:
    """UsageError at once when nothing answers at ``address`` (Ray itself would wait minutes)."""
    if address in (LOCAL, "auto"):
        return
    host, port = _host_port(address)
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise UsageError(
            f"--ray {address}: cannot reach a Ray cluster there ({reason}); start one with "
            "'ray start --head' or give its address (HOST:PORT)"
        ) from None


def _host_port(address: str) -> tuple[str, int]:
    """The host and port of ``HOST:PORT`` or ``ray://HOST:PORT``; UsageError otherwise."""
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None:
        raise UsageError(f"--ray {address!r}: give the cluster's address as HOST:PORT")
    return parts.hostname, port


def on_ray(address: str, db: str | None, concurrency: int) -> Runs:
    """Runs rows as tasks of the Ray cluster at ``address`` (``local``: one started here)."""
    ray = import_ray()
    url = store_url_for(address, db)
    check_reachable(address)

    def runs(
        plan: Plan, todo: list[int], arrived: Callable[[int, RowResult], None], drain: Drain
    ) -> None:
        if not todo:  # every row finished before: no cluster needed
            return
        connect(ray, address)
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: drain.stop())
        try:
            _drive(ray, plan, todo, arrived, url, concurrency, drain)
        finally:
            signal.signal(signal.SIGTERM, previous)
            ray.shutdown()

    return runs


def connect(ray: Any, address: str) -> None:
    """Joins the cluster at ``address`` (``local``: starts one); one line when that fails."""
    try:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    except (ConnectionError, RuntimeError) as error:  # what Ray raises when it cannot join
        raise UsageError(f"--ray {address}: cannot join the Ray cluster: {error}") from None


def _drive(
    ray: Any,
    plan: Plan,
    todo: list[int],
    arrived: Callable[[int, RowResult], None],
    url: str,
    concurrency: int,
    drain: Drain,
) -> None:
    """Keeps ``concurrency`` rows in flight and hands each result to ``arrived``; once
    ``drain`` stops, starts no row and waits its grace for those in flight (the rows
    still running then are cancelled: each is retried from its log next time)."""
    task = ray.remote(max_retries=LOST_RETRIES, retry_exceptions=False)(run_row_task)
    store = ray.put(url)  # once, in the object store: not repeated in every task's arguments
    waiting = list(reversed(todo))
    flying: dict[Any, int] = {}
    deadline: float | None = None
    while (waiting and not drain.stopping) or flying:
        if drain.stopping:
            deadline = deadline or time.monotonic() + drain.grace
            if drain.hurried or time.monotonic() >= deadline:
                for ref in flying:
                    ray.cancel(ref)
                return
        while waiting and len(flying) < concurrency and not drain.stopping:
            index = waiting.pop()
            described = describe(plan.items[index])
            described["path"] = str(Path(described["path"]).resolve())  # workers run elsewhere
            flying[task.remote(store, plan.batch, described)] = index
        ready, _ = ray.wait(list(flying), num_returns=1, timeout=POLL_SECONDS)
        for ref in ready:
            index = flying.pop(ref)
            arrived(index, _result(ray, ref, plan, index))


def _result(ray: Any, ref: Any, plan: Plan, index: int) -> RowResult:
    item = plan.items[index]
    try:
        return RowResult(**ray.get(ref))
    except ray.exceptions.RayError as error:  # lost on every try, or roost failed on the worker
        return RowResult(
            item.line, item.run_id, "error", error=f"line {item.line}: on Ray: {_reason(error)}"
        )


def _reason(error: Exception) -> str:
    """The last line of a Ray error: what went wrong, after the worker's traceback."""
    lines = [line.strip() for line in _ANSI.sub("", str(error)).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__


def run_row_task(url: str, batch: str, described: dict[str, Any]) -> dict[str, Any]:
    """A Ray task: runs one row to where it comes to rest, in a worker process."""
    line, run_id = described["line"], described["run_id"]
    row = Row(line, described["message"], described["vars"])
    try:
        flow = _flow(described["text"], described["path"])
        workspace = _workspace(url)
    except RoostError as error:  # a flow the worker cannot load, a store it cannot open
        return RowResult(line, run_id, "error", error=f"line {line}: {error}").as_dict()
    ran = run_row(workspace, flow, row, batch, run_id)
    return asyncio.run(ran).as_dict()


@lru_cache(maxsize=64)
def _flow(text: str, path: str) -> Flow:
    """The flow of ``text``, checked once a worker (rows with the same vars share it)."""
    from roost.flow import check_flow_text
    from roost.loading import with_tools

    return with_tools(check_flow_text(text, path))


@lru_cache(maxsize=4)
def _workspace(url: str) -> Workspace:
    """One store a worker, and its memory: connections are kept from one row to the next,
    and the memory is opened once (when a row first stores or recalls)."""
    return Workspace(store=SqlStore(url))
