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

from roost.engine.flows import text_hash
from roost.studio import files, nodes
from roost.studio.roundtrip import EditError, NotYaml, edit_text, new_text, read_json

if TYPE_CHECKING:
    from roost.studio.files import FlowDir

FlowName = Annotated[str, Path(min_length=1, max_length=256, description="Its path in --flows.")]
_LOCK = asyncio.Lock()  # one edit at a time: a base hash is checked and written as one step


class Edits(BaseModel):
    """``POST /flows/{name}/edits``: JSON Patch operations on the flow as read at ``base``.

    Instead of ``ops``, ``text`` is the whole new file (the page's YAML pane, its
    undo and redo): written as given, under the same ``base`` check.
    """

    model_config = ConfigDict(extra="forbid")
    base: str = Field(max_length=80, description="The hash the edits were made on")
    ops: list[dict[str, Any]] = Field(
        default_factory=list, max_length=1000, description="RFC 6902 operations"
    )
    text: str | None = Field(None, max_length=2_000_000, description="The whole new file")


class NodeEdit(BaseModel):
    """``POST /flows/{name}/rename`` and ``/delete``: one node, every place naming it."""

    model_config = ConfigDict(extra="forbid")
    base: str = Field(max_length=80, description="The hash the edit was made on")
    node: str = Field(min_length=1, max_length=128, description="The agent or channel")
    to: str | None = Field(None, max_length=128, description="Its new name (a rename)")


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

    @router.post("/flows/{name:path}/rename", response_model=None)
    async def rename_node(
        request: Request, name: FlowName, body: NodeEdit
    ) -> dict[str, Any] | JSONResponse:
        """Renames a node and every reference to it; the answer adds the ``ops`` it made."""
        folder = _folder(request)
        async with _LOCK:
            return await asyncio.to_thread(_node_edit, folder, name, body, "rename")

    @router.post("/flows/{name:path}/delete", response_model=None)
    async def delete_node(
        request: Request, name: FlowName, body: NodeEdit
    ) -> dict[str, Any] | JSONResponse:
        """Removes a node and its places in members and transitions (with ``ops``)."""
        folder = _folder(request)
        async with _LOCK:
            return await asyncio.to_thread(_node_edit, folder, name, body, "delete")

    @router.post("/flows", status_code=201, response_model=None)
    async def create_flow(request: Request, body: NewFlow) -> dict[str, Any] | JSONResponse:
        """A new flow file, written from JSON; 409 when the file is there already."""
        folder = _folder(request)
        async with _LOCK:
            return await asyncio.to_thread(_create, folder, body)


def _folder(request: Request) -> FlowDir:
    folder: FlowDir = request.app.state.hub.flows
    return folder


def studio_read(folder: FlowDir, name: str) -> dict[str, Any]:
    """``GET /flows/{name}``'s answer (the server's ``/flows/graph`` hands a flow so named here)."""
    return _read(folder, name)


def _read(folder: FlowDir, name: str) -> dict[str, Any]:
    return files.shown(folder, name, files.read(folder, name))


def _edit(folder: FlowDir, name: str, body: Edits, dry_run: bool) -> dict[str, Any] | JSONResponse:
    text = files.read(folder, name)
    changed = _changed(name, text, body.base)
    if changed is not None:
        return changed
    if body.text is not None and body.ops:
        return _refused(422, "invalid_edit", "give either ops or text, not both")
    try:
        edited = body.text if body.text is not None else edit_text(text, body.ops)
    except (EditError, NotYaml) as error:
        return _refused(422, "invalid_edit", str(error))
    if not dry_run and edited != text:
        files.rewrite(folder, name, edited)
    return files.shown(folder, name, edited)


def _changed(name: str, text: str, base: str) -> JSONResponse | None:
    """The 409 of an edit made on another text than the file's now, else None."""
    now = text_hash(text)
    if base == now:
        return None
    line = f"flow {name!r} changed on disk since {base}: read it again (now {now})"
    return _refused(409, "conflict", line)


def _node_edit(
    folder: FlowDir, name: str, body: NodeEdit, kind: str
) -> dict[str, Any] | JSONResponse:
    text = files.read(folder, name)
    changed = _changed(name, text, body.base)
    if changed is not None:
        return changed
    try:
        flow = read_json(text)
        if not isinstance(flow, dict):
            raise nodes.NodeError("the flow is not a mapping of keys")
        if kind == "rename":
            ops = nodes.rename_ops(flow, body.node, body.to or "")
        else:
            ops = nodes.delete_ops(flow, body.node)
        edited = edit_text(text, ops)
    except (nodes.NodeError, EditError, NotYaml) as error:
        return _refused(422, "invalid_edit", str(error))
    files.rewrite(folder, name, edited)
    return {**files.shown(folder, name, edited), "ops": ops}


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
