"""The studio's HTTP API: a flow read as JSON, edited by JSON Patch, written back as YAML.

Mounted on ``roost serve``'s application (``roost studio`` turns it on), so
the server's own guards stand before it: a token when the server has one,
and without one, requests of this machine's own pages only (no other site's
page may write). Files are read and written inside the flows folder only.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from roost.studio import files
from roost.studio.roundtrip import EditError, NotYaml, edit_text, new_text

if TYPE_CHECKING:
    from roost.studio.files import FlowDir

FlowName = Annotated[str, Path(min_length=1, max_length=256, description="Its path in --flows.")]
_LOCK = asyncio.Lock()  # one edit at a time: a base hash is checked and written as one step


class Edits(BaseModel):
    """``POST /flows/{name}/edits``: JSON Patch operations on the flow as read at ``base``."""

    model_config = ConfigDict(extra="forbid")
    base: str = Field(max_length=80, description="The hash the edits were made on")
    ops: list[dict[str, Any]] = Field(max_length=1000, description="RFC 6902 operations")


class NewFlow(BaseModel):
    """``POST /flows``: a new flow file written from the flow's JSON form."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=256, description="Its path in --flows")
    flow: dict[str, Any]


def studio_routes(enabled: bool) -> APIRouter:
    """The studio's routes (none unless ``enabled``: a plain server's files are never written)."""
    router = APIRouter(tags=["studio"])
    if enabled:
        _install(router)
    return router


def _install(router: APIRouter) -> None:
    @router.get("/flows/{name:path}")
    async def read_flow(request: Request, name: FlowName) -> dict[str, Any]:
        """A flow file's hash, text, JSON form and problems (a flow with problems too)."""
        folder = _folder(request)
        return await asyncio.to_thread(_read, folder, name)

    @router.post("/flows/{name:path}/edits", response_model=None)
    async def edit_flow(
        request: Request,
        name: FlowName,
        body: Edits,
        dry_run: Annotated[bool, Query(description="Answer without writing")] = False,
    ) -> dict[str, Any] | JSONResponse:
        """Applies the edits and writes the file again, only the changed lines changed."""
        folder = _folder(request)
        async with _LOCK:
            return await asyncio.to_thread(_edit, folder, name, body, dry_run)

    @router.post("/flows", status_code=201, response_model=None)
    async def create_flow(request: Request, body: NewFlow) -> dict[str, Any] | JSONResponse:
        """A new flow file, written from JSON; 409 when the file is there already."""
        folder = _folder(request)
        async with _LOCK:
            return await asyncio.to_thread(_create, folder, body)


def _folder(request: Request) -> FlowDir:
    folder: FlowDir = request.app.state.hub.flows
    return folder


def _read(folder: FlowDir, name: str) -> dict[str, Any]:
    return files.shown(folder, name, files.read(folder, name))


def _edit(folder: FlowDir, name: str, body: Edits, dry_run: bool) -> dict[str, Any] | JSONResponse:
    text = files.read(folder, name)
    now = files.shown(folder, name, text)["hash"]
    if body.base != now:
        line = f"flow {name!r} changed on disk since {body.base}: read it again (now {now})"
        return _refused(409, "conflict", line)
    try:
        edited = edit_text(text, body.ops)
    except (EditError, NotYaml) as error:
        return _refused(422, "invalid_edit", str(error))
    if not dry_run and edited != text:
        files.rewrite(folder, name, edited)
    return files.shown(folder, name, edited)


def _create(folder: FlowDir, body: NewFlow) -> dict[str, Any] | JSONResponse:
    try:
        files.create(folder, body.name, new_text(body.flow))
    except files.Exists as error:
        return _refused(409, "conflict", str(error))
    except files.Outside as error:
        return _refused(403, "forbidden", str(error))
    return _read(folder, body.name)


def _refused(status: int, kind: str, line: str) -> JSONResponse:
    return JSONResponse({"error": " ".join(line.split()), "kind": kind}, status_code=status)
