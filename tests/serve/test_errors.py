"""Errors as the API answers them: a run that does not exist is 404 on every route."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2


def test_a_run_id_that_does_not_exist_is_404_everywhere(api: httpx2.Client) -> None:
    for method, path, body in [
        ("GET", "/runs/no-such-run", None),
        ("GET", "/runs/no-such-run/events", None),
        ("GET", "/runs/no-such-run/graph", None),
        ("GET", "/runs/no-such-run/stream", None),
        ("POST", "/runs/no-such-run/messages", {"content": "x"}),
        ("POST", "/runs/no-such-run/retry", None),
        ("POST", "/runs/no-such-run/fork", {"at": 1}),
        ("POST", "/runs/no-such-run/cancel", None),
    ]:
        answer = api.request(method, path, json=body)
        assert answer.status_code == 404, (path, answer.text)
        assert answer.json()["error"].startswith("no run 'no-such-run' in ")
