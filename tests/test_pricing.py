"""roost's table of known models, a flow's overrides, and what calls and runs cost."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from roost.errors import FlowError
from roost.events import (
    FlowEvent,
    FlowRecord,
    LlmAttempt,
    LlmCallEvent,
    LlmUsage,
    RunStartEvent,
)
from roost.flow import load_flow_text
from roost.pricing import (
    DEFAULT_CONTEXT_WINDOW,
    Cost,
    RunCost,
    context_window_of,
    cost_of,
    known_model,
    prices_as_of,
    provider_entries,
    run_cost,
    short_text,
    table,
)


def providers_of(yaml_text: str) -> dict[str, object]:
    flow = load_flow_text(textwrap.dedent(yaml_text), "flow.yaml")
    return dict(flow.providers)


FLOW = """\
roost: 1
providers:
  mini: {kind: openai, model: gpt-4o-mini}
  claude: {kind: anthropic, model: claude-3-5-haiku-20241022}
  own: {kind: openai, model: my-local-model, context_window: 4000,
        price: {input: 1, cached_input: 0.5, output: 2}}
  nocache: {kind: openai, model: gpt-4o, price: {input: 3, output: 4}}
  unknown: {kind: openai, model: my-local-model}
agents:
  a: {provider: mini}
"""


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


def test_a_call_is_priced_from_the_table_and_marked_estimated() -> None:
    providers = providers_of(FLOW)
    usage = LlmUsage(prompt_tokens=1_000_000, completion_tokens=500_000, cached_tokens=200_000)
    amount, estimated = cost_of(usage, providers["mini"])
    # 800k input at 0.15, 200k cached at 0.075, 500k output at 0.60 (per million).
    assert amount == pytest.approx(0.8 * 0.15 + 0.2 * 0.075 + 0.5 * 0.60)
    assert estimated is True


def test_a_flow_price_overrides_the_table_and_is_not_estimated() -> None:
    providers = providers_of(FLOW)
    usage = LlmUsage(prompt_tokens=2_000_000, completion_tokens=1_000_000, cached_tokens=1_000_000)
    assert cost_of(usage, providers["own"]) == Cost(1 * 1 + 1 * 0.5 + 1 * 2, False)
    # cached_input left out: cached tokens cost what input costs.
    assert cost_of(usage, providers["nocache"]) == Cost(2 * 3 + 1 * 4, False)


def test_cached_tokens_reported_over_the_prompt_never_make_a_call_cost_less() -> None:
    """A provider that reports more cached tokens than prompt tokens (some count the cache
    apart): every prompt token is priced as cached, none below nothing."""
    providers = providers_of(FLOW)
    usage = LlmUsage(prompt_tokens=10**6, completion_tokens=0, cached_tokens=3 * 10**6)
    assert cost_of(usage, providers["own"]) == Cost(0.5, False)


def test_a_call_without_tokens_costs_nothing_and_an_unknown_model_is_unpriced() -> None:
    providers = providers_of(FLOW)
    assert cost_of(LlmUsage(), providers["unknown"]) == Cost(0.0, False)
    assert cost_of(None, providers["mini"]) == Cost(0.0, False)
    assert cost_of(LlmUsage(prompt_tokens=10), providers["unknown"]) == Cost(None, True)
    # The model that answered is priced when the entry's is unknown.
    amount, _ = cost_of(LlmUsage(prompt_tokens=10**6), providers["unknown"], model="gpt-4o")
    assert amount == pytest.approx(2.50)


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


def _record(text: str) -> FlowRecord:
    return FlowRecord(path="flow.yaml", name="f", hash="sha256:" + str(hash(text)), text=text)


def _call(
    seq: int, provider: str, model: str, usage: LlmUsage | None, **more: object
) -> LlmCallEvent:
    return LlmCallEvent(
        seq=seq,
        run="r",
        ts="t",
        node="a",
        provider=provider,
        model=model,
        request_digest="sha256:2:0",
        usage=usage,
        **more,  # type: ignore[arg-type]
    )


def test_a_run_costs_the_sum_of_its_calls_under_the_flow_in_force() -> None:
    million = LlmUsage(prompt_tokens=10**6, completion_tokens=0)
    changed = FLOW.replace("input: 1, cached_input: 0.5", "input: 7, cached_input: 0.5")
    events = [
        RunStartEvent(seq=0, run="r", ts="t", flow=_record(FLOW)),
        _call(1, "own", "my-local-model", million),  # 1.00, the flow's own price
        _call(2, "mini", "gpt-4o-mini-2024-07-18", million),  # 0.15 from the table
        _call(3, "mini", "gpt-4o-mini", None, error="boom"),  # a failed call: no usage
        FlowEvent(seq=4, run="r", ts="t", flow=_record(changed)),
        _call(5, "own", "my-local-model", million),  # 7.00 under the new flow
        _call(6, "unknown", "my-local-model", million),  # no price anywhere
    ]
    total = run_cost(events)
    assert total.amount == pytest.approx(1 + 0.15 + 7)
    assert total.estimated is True
    assert total.unpriced == 1
    assert total.text() == "$8.15 (estimated, without 1 call of unknown price)"


def test_a_fallbacks_answer_is_priced_by_the_entry_that_gave_it() -> None:
    attempts = (
        LlmAttempt(provider="unknown", model="my-local-model", outcome="http 500"),
        LlmAttempt(provider="own", model="my-local-model", outcome="ok"),
    )
    usage = LlmUsage(prompt_tokens=0, completion_tokens=10**6)
    events = [
        RunStartEvent(seq=0, run="r", ts="t", flow=_record(FLOW)),
        _call(1, "unknown", "my-local-model", usage, attempts=attempts),
    ]
    assert run_cost(events) == RunCost(2.0, False, 0)


def test_a_placeholder_price_counts_as_unset_when_read_from_the_log() -> None:
    text = FLOW.replace("price: {input: 3, output: 4}", 'price: "${PRICE}"')
    entries = provider_entries(text)
    assert entries["nocache"].price is None
    assert entries["own"].context_window == 4000
    assert provider_entries("not: [valid") == {}
    assert provider_entries("- a list") == {}


@pytest.mark.parametrize(
    ("total", "shown"),
    [
        (RunCost(), "$0.00"),
        (RunCost(0.004213, True), "~$0.0042"),
        (RunCost(0.5, False, 2), "$0.50+"),
        (RunCost(0.0, True, 3), "?"),
    ],
)
def test_a_cost_in_a_narrow_column_marks_an_estimate_with_a_tilde(
    total: RunCost, shown: str
) -> None:
    assert short_text(total) == shown


@pytest.mark.parametrize(
    ("total", "shown"),
    [
        (RunCost(), "$0.00"),
        (RunCost(0.004213, True), "$0.0042 (estimated)"),
        (RunCost(0.0000123, True), "<$0.0001 (estimated)"),
        (RunCost(1234.5, False), "$1,234.50"),
        (RunCost(0.0, True, 3), "unknown"),
    ],
)
def test_a_cost_reads_as_dollars_marked_estimated(total: RunCost, shown: str) -> None:
    assert total.text() == shown


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
