"""A flow's wrong price, and the docs' table of known models as shipped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from roost.errors import FlowError
from roost.flow import load_flow_text
from roost.pricing import table


@pytest.mark.parametrize(
    ("price", "message"),
    [
        ("{input: -1, output: 2}", "price.input of provider .p.: must be at least 0"),
        ("{input: 1}", "output"),
        ("{input: 1, output: 2, per: token}", "per"),
        ("{input: one, output: 2}", "input"),
    ],
)
def test_a_wrong_price_is_a_located_error(price: str, message: str) -> None:
    text = f"roost: 1\nproviders:\n  p: {{kind: openai, model: m, price: {price}}}\n"
    with pytest.raises(FlowError) as caught:
        load_flow_text(text, "flow.yaml")
    assert caught.value.problems[0].line == 3
    assert re.search(message, str(caught.value))


def test_the_docs_list_the_table_as_shipped() -> None:
    page = (Path(__file__).parent.parent / "docs" / "context-and-cost.md").read_text()
    rows = re.findall(
        r"^\| `([^`]+)` \| ([\d,]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", page, re.M
    )
    documented = {
        name: (int(window.replace(",", "")), float(i), float(c), float(o))
        for name, window, i, c, o in rows
    }
    shipped = {
        row.name: (row.context_window, row.price.input, row.price.cached_input, row.price.output)
        for row in table().values()
        if row.price is not None
    }
    assert documented == shipped
