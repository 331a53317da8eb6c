"""The context window a server names when it refuses a request as too long."""

from __future__ import annotations

import pytest

from roost.context_window import limit_in


@pytest.mark.parametrize(
    ("refusal", "limit"),
    [
        (
            "This model's maximum context length is 4,096 tokens. However, your messages "
            "resulted in 5000 tokens. Please reduce the length of the messages.",
            4096,
        ),
        ("prompt is too long: 210000 tokens > 200000 maximum", 200_000),
        (
            "input length and `max_tokens` exceed context limit: 199000 + 21333 > 200000, "
            "decrease input length or `max_tokens` and try again",
            200_000,
        ),
        ("request (5000 tokens) exceeds the available context size (4096 tokens)", 4096),
        ("the request exceeds the available context size, n_ctx: 8192", 8192),
        (
            "The input token count (1200000) exceeds the maximum number of tokens allowed "
            "(1048576).",
            1_048_576,
        ),
        (
            "Trying to keep the first 5000 tokens when context the overflows. However, the "
            "model is loaded with context length of only 4096 tokens",
            4096,
        ),
        ("Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8193.", 8193),
    ],
)
def test_each_servers_wording_gives_its_limit(refusal: str, limit: int) -> None:
    assert limit_in(refusal) == limit


@pytest.mark.parametrize(
    "refusal",
    [
        "Your input exceeds the context window of this model. Please adjust your input.",
        "HTTP 400: maximum context length is 12 tokens",  # too small to be a window
        "",
    ],
)
def test_a_refusal_that_names_no_limit_gives_none(refusal: str) -> None:
    assert limit_in(refusal) is None
