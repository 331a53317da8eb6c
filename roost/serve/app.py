"""The HTTP API of ``roost serve``: FastAPI routes over the hub, errors as one JSON line.

Every route is async and runs on the server's one event loop, as do the runs'
steps. Errors a client causes answer with the status their kind calls for and
``{"error": LINE, "kind": KIND}``, the line the command line would print;
anything unforeseen answers 500 with one line, its traceback going to the
server's log only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Header, Path, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from sse_starlette import EventSourceResponse
from starlette.exceptions import HTTPException

import roost
from roost.errors import RoostError
from roost.events import event_dict
from roost.ports import verified_type
from roost.serve import schemas
from roost.serve.access import Access, SameOrigin
from roost.serve.apidocs import install_docs
from roost.serve.config import ServeConfig
from roost.serve.errors import error_body, one_line, status_of
from roost.serve.guard import Guard
from roost.serve.hub import Hub
from roost.serve.metrics import CONTENT_TYPE
from roost.serve.page import graph_svg, page_html
from roost.serve.rows import run_row
from roost.serve.streams import follow, sse_frames
from roost.studio.routes import studio_read, studio_routes

log = logging.getLogger("roost.serve")
RETRY_AFTER = "5"  # seconds a client told "draining" waits before it asks again (elsewhere)

RunId = Annotated[str, Field(min_length=1, max_length=64)]
FlowPath = Annotated[str, Query(min_length=1, max_length=256, description="Its path in --flows.")]
OptionalFlowPath = Annotated[
    str | None, Query(min_length=1, max_length=256, description="Its path in --flows.")
]
_MISSING_FLOW = {"type": "missing", "loc": ("query", "flow"), "msg": "Field required"}
After = Annotated[
    int,
    Query(ge=-1, le=2**53, description="Only events whose seq is greater (-1: all of them)."),
]
_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": schemas.Error, "description": text}
    for status, text in (
        (400, "Bad input: malformed JSON, a bad route"),
        (401, "No token, or an unknown one"),
        (403, "The flow's path leads outside the flows folder"),
        (404, "No such run or flow"),
        (409, "The run is not in a state that allows this"),
        (413, "The body is over the server's limit"),
        (422, "A field is missing, unknown or of the wrong type; or the flow is invalid"),
    )
}
ERRORS: dict[int | str, dict[str, Any]] = _ERRORS
WITH_QUEUE: dict[int | str, dict[str, Any]] = {
    **_ERRORS,
    429: {"model": schemas.Error, "description": "The run's queue of messages is full"},
}


def create_app(config: ServeConfig, hub: Hub | None = None) -> FastAPI:
    """The API of one server (its hub made here unless given)."""
    hub = hub if hub is not None else Hub(config)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await hub.open()
        try:
            yield
        finally:
            await hub.close()

    app = FastAPI(
        title="roost serve",
        version=roost.__version__,
        description="Runs of roost flows over HTTP: start, answer, stream, retry, fork, cancel.",
        lifespan=lifespan,
        docs_url=None,  # served by install_docs, from the package rather than a CDN
        redoc_url=None,
    )
    app.state.hub = hub
    _errors(app)
    install_docs(app)
    _routes(app, hub)
    app.include_router(studio_routes(config.studio))  # roost studio's edits of flow files
    app.add_middleware(Guard, tokens=config.tokens, body_limit=config.body_limit)
    if config.cors:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        )
    if not config.tokens:  # outermost: another site's page gets no further, preflight included
        app.add_middleware(SameOrigin, access=Access.loopback(config.host, config.cors))
    return app


def _errors(app: FastAPI) -> None:
    @app.exception_handler(RoostError)
    async def roost_error(request: Request, error: RoostError) -> JSONResponse:
        status, _ = status_of(error)
        headers = {"Retry-After": RETRY_AFTER} if status == 503 else None
        return JSONResponse(error_body(error), status_code=status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = error.errors()
        if any(problem.get("type") == "json_invalid" for problem in problems):
            detail = next(p for p in problems if p.get("type") == "json_invalid")
            reason = (detail.get("ctx") or {}).get("error", "malformed")
            body = {"error": f"the request body is not valid JSON: {reason}", "kind": "bad_json"}
            return JSONResponse(body, status_code=400)
        lines = [_problem_line(problem) for problem in problems[:5]]
        body = {"error": "; ".join(lines), "kind": "invalid_request"}
        return JSONResponse(body, status_code=422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        if error.status_code == 404:
            text = f"no such endpoint: {request.method} {request.url.path}"
        elif error.status_code == 405:
            text = f"{request.method} is not allowed on {request.url.path}"
        else:
            text = one_line(str(error.detail))
        kinds = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}
        body = {"error": text, "kind": kinds.get(error.status_code, "bad_request")}
        return JSONResponse(body, status_code=error.status_code, headers=error.headers)

    @app.exception_handler(Exception)
    async def internal(request: Request, error: Exception) -> JSONResponse:
        log.error("roost serve: %s %s failed", request.method, request.url.path, exc_info=error)
        return JSONResponse(error_body(error), status_code=500)


def _problem_line(problem: Any) -> str:
    where = ".".join(str(part) for part in problem.get("loc", ()))
    message = str(problem.get("msg", "invalid")).replace("Value error, ", "")
    message = message[:1].lower() + message[1:]
    return one_line(f"{where}: {message}" if where else message)


class _Command(BaseModel):
    """What a WebSocket client sends: a message (or answer), or a cancel."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    type: Literal["message", "cancel"]
    content: schemas.Message | None = None
    as_: schemas.Name | None = Field(default=None, alias="as")


_COMMAND: TypeAdapter[_Command] = TypeAdapter(_Command)


def _routes(app: FastAPI, hub: Hub) -> None:
    """Every route, registered in this order (an earlier path is matched first)."""
    _server_routes(app, hub)
    _flow_routes(app, hub)
    _run_routes(app, hub)
    _run_view_routes(app, hub)
    _control_routes(app, hub)
    _stream_route(app, hub)
    _socket_route(app, hub)


def _server_routes(app: FastAPI, hub: Hub) -> None:
    """The server's own: alive, ready, its metrics and its page."""

    @app.get("/health", response_model=schemas.Health, tags=["server"])
    async def health() -> dict[str, Any]:
        """Whether the server is up (open to all, with or without a token)."""
        return {"status": "ok", "version": roost.__version__, "worker": hub.config.worker}

    @app.get(
        "/ready",
        response_model=schemas.Ready,
        responses={503: {"model": schemas.Ready, "description": "Draining: send work elsewhere"}},
        tags=["server"],
    )
    async def ready() -> JSONResponse:
        """Whether the server takes new runs and messages (503 while it drains to stop)."""
        if hub.accepting:
            return JSONResponse({"status": "ready", "worker": hub.config.worker})
        body = {"status": "draining", "worker": hub.config.worker}
        return JSONResponse(body, status_code=503, headers={"Retry-After": RETRY_AFTER})

    @app.get(
        "/metrics",
        response_class=PlainTextResponse,
        responses={200: {"content": {CONTENT_TYPE: {}}, "description": "Prometheus text"}},
        tags=["server"],
    )
    async def metrics() -> Response:
        """This worker's metrics in the Prometheus text format (runs, steps, model calls...)."""
        text = await asyncio.to_thread(hub.metrics.text)  # the gauges read the store
        return Response(text, media_type=CONTENT_TYPE)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(page_html(hub.config.studio), headers={"Cache-Control": "no-store"})


def _flow_routes(app: FastAPI, hub: Hub) -> None:
    """The flows folder: its files, a check of one, a drawing of one."""

    @app.get("/flows", response_model=list[schemas.FlowInfo], responses=ERRORS, tags=["flows"])
    async def list_flows() -> list[dict[str, Any]]:
        """The flow files in the server's flows folder, each checked as flow language."""
        return [
            {
                "path": entry.path,
                "name": entry.name,
                "description": entry.description,
                "valid": entry.valid,
                "problems": list(entry.problems),
            }
            for entry in hub.flows.entries()
        ]

    @app.post(
        "/flows/validate", response_model=schemas.Validation, responses=ERRORS, tags=["flows"]
    )
    async def validate(body: schemas.ValidateFlow) -> dict[str, Any]:
        """Checks one flow file, its tools included: every problem, one line each."""
        problems = hub.flows.check(body.flow)
        valid = not any(problem.severity == "error" for problem in problems)
        return {"flow": body.flow, "valid": valid, "problems": [str(p) for p in problems]}

    @app.get(
        "/flows/graph",
        response_model=None,
        responses={200: {"model": schemas.FlowGraph}, **ERRORS},
        tags=["flows"],
    )
    async def flow_graph(flow: OptionalFlowPath = None) -> dict[str, Any]:
        """The drawing (SVG) of a flow of the folder, as the page draws a run of it.

        Without ``flow``, in a studio, this is ``GET /flows/{name}`` of a flow named
        ``graph`` (a link of that name to a flow file), which this path would hide.
        """
        if flow is None:
            if not hub.config.studio:
                raise RequestValidationError([_MISSING_FLOW])
            return await asyncio.to_thread(studio_read, hub.flows, "graph")
        # Loading imports the flow's tools and dot runs as a child process: off the loop.
        svg = await asyncio.to_thread(lambda: graph_svg(hub.flows.load(flow)))
        return schemas.FlowGraph(flow=flow, svg=svg).model_dump()


def _run_routes(app: FastAPI, hub: Hub) -> None:
    """Runs: start one, list them, read one."""

    @app.post(
        "/runs",
        status_code=201,
        response_model=schemas.RunDetail,
        responses=ERRORS,
        tags=["runs"],
    )
    async def start(body: schemas.StartRun) -> dict[str, Any]:
        """Starts a run; answers once its first events are stored, while it goes on."""
        run_id = await hub.start(
            body.flow, body.message, body.from_, body.to, body.title, body.budget
        )
        return await asyncio.to_thread(hub.summary, run_id)

    @app.get("/runs", response_model=list[schemas.RunRow], responses=ERRORS, tags=["runs"])
    async def list_runs(
        flow: Annotated[str | None, Query(max_length=256)] = None,
        status: schemas.Status | None = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 100,
        offset: Annotated[int, Query(ge=0, le=2**31, description="Runs to skip (paging).")] = 0,
    ) -> list[dict[str, Any]]:
        """Stored runs, newest first: at most ``limit``, after the first ``offset``."""
        # One page, read by the database in a thread: a large store never blocks the loop.
        found = await asyncio.to_thread(
            hub.store.runs, flow=flow, status=status, limit=limit, offset=offset
        )
        return [run_row(info) for info in found]

    @app.get("/runs/{run_id}", response_model=schemas.RunDetail, responses=ERRORS, tags=["runs"])
    async def read_run(run_id: RunId) -> dict[str, Any]:
        """Where a run stands: its status, what it waits for, whether a step is running."""
        return await asyncio.to_thread(hub.summary, run_id)


def _run_view_routes(app: FastAPI, hub: Hub) -> None:
    """What a run shows: the drawing of its flow, its events, its images."""

    @app.get("/runs/{run_id}/graph", response_model=schemas.Graph, responses=ERRORS, tags=["runs"])
    async def graph(run_id: RunId) -> dict[str, Any]:
        """The drawing (SVG) of the flow the run follows; its nodes' ids are ``node-NAME``."""
        flow = await asyncio.to_thread(hub.reads.flow, run_id)
        svg = await asyncio.to_thread(graph_svg, flow)  # dot runs as a child process
        return {"run": run_id, "svg": svg}

    @app.get(
        "/runs/{run_id}/events",
        response_model=list[dict[str, Any]],
        responses=ERRORS,
        tags=["runs"],
    )
    async def events(run_id: RunId, after: After = -1) -> list[dict[str, Any]]:
        """The run's events whose seq is greater than ``after``, as its event log holds them."""
        return [event_dict(event) for event in await hub.reads.events_after(run_id, after)]

    @app.get(
        "/images/{digest}",
        responses={
            **ERRORS,
            200: {"description": "The image's bytes", "content": {"image/*": {}}},
        },
        tags=["runs"],
    )
    async def image(digest: Annotated[str, Path(max_length=80)]) -> Response:
        """An image a message carries, by the ``hash`` its event names (``sha256:<hex>``)."""
        found = await asyncio.to_thread(hub.images.find, digest)
        # Served only as what its bytes are, an image whose hash they have: bytes an older
        # roost kept unchecked from a run file are never served (as a page, say).
        media_type = await asyncio.to_thread(verified_type, digest, found[1]) if found else None
        if found is None or media_type is None:
            raise HTTPException(404, f"no image {digest!r} in the store")
        # Content-addressed: the bytes of a hash never change.
        headers = {
            "Cache-Control": "public, max-age=31536000, immutable",
            "X-Content-Type-Options": "nosniff",
        }
        return Response(found[1], media_type=media_type, headers=headers)


def _control_routes(app: FastAPI, hub: Hub) -> None:
    """What changes a run: a message, a retry, a fork, a cancel."""

    @app.post(
        "/runs/{run_id}/messages",
        status_code=202,
        response_model=schemas.Accepted,
        responses=WITH_QUEUE,
        tags=["runs"],
    )
    async def send(run_id: RunId, body: schemas.SendMessage) -> dict[str, Any]:
        """A person's message or answer. It waits in the run's queue while a step runs;
        consecutive messages from the same person are delivered as one turn."""
        queued = await hub.send(run_id, body.content, body.as_)
        return {"run": run_id, "queued": queued}

    @app.post(
        "/runs/{run_id}/retry",
        status_code=202,
        response_model=schemas.RunDetail,
        responses=ERRORS,
        tags=["runs"],
    )
    async def retry(run_id: RunId) -> dict[str, Any]:
        """Redoes the step a run stopped at; the run goes on in the background."""
        await hub.retry(run_id)
        return await asyncio.to_thread(hub.summary, run_id)

    @app.post(
        "/runs/{run_id}/fork",
        status_code=201,
        response_model=schemas.RunDetail,
        responses=ERRORS,
        tags=["runs"],
    )
    async def fork(run_id: RunId, body: schemas.ForkRun) -> dict[str, Any]:
        """A new run that shares the first ``at`` events and goes on from there."""
        new_id = await hub.fork(run_id, body.at, body.message)
        return await asyncio.to_thread(hub.summary, new_id)

    @app.post(
        "/runs/{run_id}/cancel",
        response_model=schemas.Cancelled,
        responses=ERRORS,
        tags=["runs"],
    )
    async def cancel(run_id: RunId) -> dict[str, Any]:
        """Stops the step in flight (it is recorded; retry redoes it) and drops waiting messages."""
        dropped = await hub.cancel(run_id)
        return {"run": run_id, "dropped": dropped}


def _stream_route(app: FastAPI, hub: Hub) -> None:
    """The run's items as Server-Sent Events."""

    @app.get(
        "/runs/{run_id}/stream",
        responses={
            **ERRORS,
            200: {
                "description": "Server-Sent Events: event, delta, state and notice",
                "content": {"text/event-stream": {}},
            },
        },
        tags=["runs"],
    )
    async def stream(
        request: Request,
        run_id: RunId,
        after: After = -1,
        last_event_id: Annotated[str | None, Header(max_length=32)] = None,
    ) -> EventSourceResponse:
        """The run's events as they are recorded and its answers' text as it streams.

        A reconnecting client's ``Last-Event-ID`` takes the place of ``after``."""
        await asyncio.to_thread(hub.store.run, run_id)  # 404 before the stream opens
        if last_event_id is not None and last_event_id.strip().isdigit():
            after = max(after, int(last_event_id))
        client = _client(request)
        hub.broadcast.open_stream(client)  # 429 past the streams one client may hold

        async def items() -> AsyncIterator[bytes]:
            try:
                async for batch in follow(hub, run_id, after):
                    if batch:
                        yield sse_frames(batch)
            finally:
                hub.broadcast.close_stream(client)

        return EventSourceResponse(items(), ping=15)


def _socket_route(app: FastAPI, hub: Hub) -> None:
    """The run's items over a WebSocket, and messages back."""

    @app.websocket("/runs/{run_id}/ws")
    async def socket(websocket: WebSocket, run_id: str, after: int = -1) -> None:
        """The stream's items out; messages ({"type": "message", ...}) and cancels in."""
        # A browser, which cannot set headers here, offers "roost" and "bearer.TOKEN".
        offered = websocket.scope.get("subprotocols") or []
        await websocket.accept(subprotocol="roost" if "roost" in offered else None)
        client = _client(websocket)
        try:
            await asyncio.to_thread(hub.store.run, run_id)
            hub.broadcast.open_stream(client)
        except RoostError as error:
            await websocket.send_json({"type": "error", **error_body(error)})
            await websocket.close(code=4429 if status_of(error)[0] == 429 else 4404)
            return
        sender = asyncio.create_task(_send_items(websocket, hub, run_id, after))
        try:
            while True:
                text = await websocket.receive_text()
                await websocket.send_json(await _answer(hub, run_id, text))
        except WebSocketDisconnect:
            pass
        finally:
            hub.broadcast.close_stream(client)
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender


async def _send_items(websocket: WebSocket, hub: Hub, run_id: str, after: int) -> None:
    async for batch in follow(hub, run_id, after):
        for item in batch:
            await websocket.send_text(item.text)


def _client(connection: Request | WebSocket) -> str:
    """The address a stream's client connects from: what its streams are counted by."""
    return connection.client.host if connection.client is not None else "unknown"


async def _answer(hub: Hub, run_id: str, text: str) -> dict[str, Any]:
    """What a WebSocket client's command gets back: accepted, cancelled, or an error."""
    try:
        command = _COMMAND.validate_json(text)
    except ValidationError as error:
        problems = [_problem_line(p) for p in error.errors()[:5]]
        return {"type": "error", "error": "; ".join(problems), "kind": "invalid_request"}
    try:
        if command.type == "cancel":
            return {"type": "cancelled", "run": run_id, "dropped": await hub.cancel(run_id)}
        if command.content is None:
            return {"type": "error", "error": "content: field required", "kind": "invalid_request"}
        queued = await hub.send(run_id, command.content, command.as_)
        return {"type": "accepted", "run": run_id, "queued": queued}
    except RoostError as error:
        return {"type": "error", "status": status_of(error)[0], **error_body(error)}
