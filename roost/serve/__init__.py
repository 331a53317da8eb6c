"""``roost serve``: many runs at once over HTTP, Server-Sent Events and WebSocket, and a page.

``create_app(config)`` is the FastAPI application (``roost.serve.app``);
``serve(host, port, config)`` runs it on uvicorn (``roost.serve.server``).
Nothing here is imported by the command line until ``roost serve`` runs, so
``roost --help`` and the other commands never load FastAPI or uvicorn.
"""

from __future__ import annotations

from roost.serve.config import ServeConfig

__all__ = ["ServeConfig"]
