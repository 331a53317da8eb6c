"""A flow's provider entries as the pricing reads them from a run's log."""

from __future__ import annotations

from roost.pricing import provider_entries
from tests.fakes.pricing import FLOW


def test_a_placeholder_price_counts_as_unset_when_read_from_the_log() -> None:
    text = FLOW.replace("price: {input: 3, output: 4}", 'price: "${PRICE}"')
    entries = provider_entries(text)
    assert entries["nocache"].price is None
    assert entries["own"].context_window == 4000
    assert provider_entries("not: [valid") == {}
    assert provider_entries("- a list") == {}
