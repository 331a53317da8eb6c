"""The API is documented: its OpenAPI schema names every route, and ``/docs`` serves its page."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2


def test_the_api_is_documented_at_docs(api: httpx2.Client) -> None:
    schema = api.get("/openapi.json").json()
    paths = schema["paths"]
    for path in (
        "/flows",
        "/flows/validate",
        "/runs",
        "/runs/{run_id}",
        "/runs/{run_id}/events",
        "/runs/{run_id}/messages",
        "/runs/{run_id}/retry",
        "/runs/{run_id}/fork",
        "/runs/{run_id}/cancel",
        "/runs/{run_id}/stream",
        "/runs/{run_id}/graph",
    ):
        assert path in paths
    assert "429" in paths["/runs/{run_id}/messages"]["post"]["responses"]
    docs = api.get("/docs")
    assert docs.status_code == 200 and "openapi.json" in docs.text
