"""roost's table of known models: its rows, how a model is found, the context window."""

from __future__ import annotations

import pytest

from roost.pricing import (
    DEFAULT_CONTEXT_WINDOW,
    context_window_of,
    known_model,
    prices_as_of,
    table,
)
from tests.fakes.pricing import FLOW, providers_of


def test_the_table_ships_with_the_package_and_every_row_is_whole() -> None:
    rows = table()
    assert {"gpt-4o", "gpt-4o-mini", "claude-sonnet-4", "deepseek-chat"} <= set(rows)
    for row in rows.values():
        assert row.context_window > 0
        assert row.price is not None
        assert min(row.price.input, row.price.cached_input, row.price.output) >= 0
    assert prices_as_of()[:2] == "20"


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),  # the longest known name wins
        ("openai/gpt-4o-mini", "gpt-4o-mini"),  # a router's vendor prefix
        ("GPT-4.1-mini", "gpt-4.1-mini"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
        ("anthropic/claude-3.5-sonnet", "claude-3-5-sonnet"),  # an alias
        ("chatgpt-4o-latest", "gpt-4o"),
        ("deepseek-chat:free", "deepseek-chat"),
        ("gpt-4.5-preview", None),  # not gpt-4: a name only matches up to a - or :
        ("gpt-4omni", None),
        ("llama3", None),
    ],
)
def test_a_model_is_found_by_name_snapshot_prefix_or_alias(name: str, found: str | None) -> None:
    row = known_model(name)
    assert (row.name if row else None) == found


def test_the_context_window_comes_from_the_flow_then_the_table_then_the_default() -> None:
    providers = providers_of(FLOW)
    assert context_window_of(providers["own"]) == 4000
    assert context_window_of(providers["mini"]) == 128_000
    assert context_window_of(providers["claude"]) == 200_000
    assert context_window_of(providers["unknown"]) == DEFAULT_CONTEXT_WINDOW
    # The model that answered decides over the entry's own name.
    assert context_window_of(providers["unknown"], "gpt-4.1") == 1_047_576
    assert context_window_of(None) == DEFAULT_CONTEXT_WINDOW
