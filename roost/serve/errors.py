"""Errors as the API answers them: a status and one JSON line, as the command line says it.

Every failure a client can cause is a ``RoostError`` whose text is the line
the command line would print; here it gets its HTTP status. Anything else is
an internal error: the client gets one line naming it, the server's log the
traceback.
"""

from __future__ import annotations

from typing import Any

from roost.errors import (
    ConcurrentRunError,
    EventLogError,
    FlowError,
    RoostError,
    RunNotFoundError,
    RunStateError,
    StoreError,
    UsageError,
)
from roost.store.leases import QueueFull


class Unauthorized(RoostError):
    """No token, or one this server does not know."""


class OutsideFlows(UsageError):
    """A flow path that leads out of the server's flows folder."""


class NoSuchFlow(RunNotFoundError):
    """A flow path inside the flows folder that names no file."""


class Busy(RunStateError):
    """The run is taking a step: what was asked must wait for it to end."""


class TooManyStreams(RoostError):
    """A client has as many streams open as one client may."""


class Draining(RoostError):
    """The server is stopping: it takes no new runs or messages (another worker does)."""


class TooLarge(UsageError):
    """A request body over the server's limit."""


# Most specific first: the first class an error is an instance of decides.
STATUSES: tuple[tuple[type[BaseException], int, str], ...] = (
    (Unauthorized, 401, "unauthorized"),
    (OutsideFlows, 403, "forbidden"),
    (RunNotFoundError, 404, "not_found"),
    (TooLarge, 413, "too_large"),
    (QueueFull, 429, "queue_full"),
    (TooManyStreams, 429, "too_many_streams"),
    (FlowError, 422, "invalid_flow"),
    (RunStateError, 409, "conflict"),
    (ConcurrentRunError, 409, "conflict"),
    (UsageError, 400, "bad_request"),
    (EventLogError, 500, "damaged_run"),
    (StoreError, 503, "store_unavailable"),
    (Draining, 503, "draining"),
    (RoostError, 500, "failed"),
)


def status_of(error: BaseException) -> tuple[int, str]:
    for cls, status, kind in STATUSES:
        if isinstance(error, cls):
            return status, kind
    return 500, "internal"


def error_body(error: BaseException) -> dict[str, Any]:
    """``{"error": LINE, "kind": KIND}``, and a flow's problems when it has them."""
    _, kind = status_of(error)
    if isinstance(error, FlowError):
        problems = [str(problem) for problem in error.problems]
        shown = [str(problem) for problem in error.errors] or problems
        more = f" (and {len(shown) - 1} more)" if len(shown) > 1 else ""
        return {
            "error": (shown[0] if shown else "invalid flow") + more,
            "kind": kind,
            "problems": problems,
        }
    if isinstance(error, RoostError):
        return {"error": one_line(str(error)), "kind": kind}
    return {"error": f"internal error: {type(error).__name__}", "kind": "internal"}


def one_line(text: str) -> str:
    return " ".join(text.split()) or "error"
