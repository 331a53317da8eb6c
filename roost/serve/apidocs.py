"""``/docs``: the API's interactive page (Swagger UI), served from this server, never a CDN.

FastAPI's own ``/docs`` loads Swagger UI's script and stylesheet from a CDN,
so it is blank on a machine offline. The ``fastapi-offline`` package ships
those files (Swagger UI 5, which reads the OpenAPI 3.1 FastAPI writes); they
are served here under ``/docs/`` and the page points at them. Swagger UI's
online validator badge is turned off: the page loads nothing from elsewhere.
"""

from __future__ import annotations

import asyncio
from functools import cache
from importlib import resources

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, Response
from starlette.exceptions import HTTPException

ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon.png": "image/png",
}
DOCS_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", *(f"/docs/{name}" for name in ASSETS)})


def install_docs(app: FastAPI) -> None:
    """Adds ``/docs`` and its assets to ``app`` (made with ``docs_url=None``)."""

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title=f"{app.title} - API",
            swagger_js_url="/docs/swagger-ui-bundle.js",
            swagger_css_url="/docs/swagger-ui.css",
            swagger_favicon_url="/docs/favicon.png",
            oauth2_redirect_url="/docs/oauth2-redirect",
            swagger_ui_parameters={"validatorUrl": None},  # the badge asks a site elsewhere
        )

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    async def redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/docs/{name}", include_in_schema=False)
    async def asset(name: str) -> Response:
        media_type = ASSETS.get(name)
        if media_type is None:
            raise HTTPException(404)
        data = await asyncio.to_thread(_asset, name)  # read once, off the loop
        return Response(data, media_type=media_type, headers={"Cache-Control": "max-age=86400"})


@cache
def _asset(name: str) -> bytes:
    return resources.files("fastapi_offline").joinpath("static", name).read_bytes()
