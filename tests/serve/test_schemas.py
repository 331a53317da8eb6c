"""The bodies the API takes: a bad one is refused with one JSON error naming the field."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import httpx2


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        (b'{"flow": ', 400, "the request body is not valid JSON: "),
        (b'{"flow": "chat.yaml", "mesage": "hi"}', 422, "body.mesage: extra inputs"),
        (b"{}", 422, "body.flow: field required"),
        (b'{"flow": 7}', 422, "body.flow: input should be a valid string"),
        (b'{"flow": "chat.yaml", "message": "a\\u0000b"}', 422, "body.message: text may not"),
        (b"[1, 2]", 422, "body: input should be a valid dictionary"),
    ],
)
def test_bad_bodies_get_one_json_error(
    api: httpx2.Client, body: bytes, status: int, error: str
) -> None:
    answer = api.post("/runs", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"].startswith(error)
