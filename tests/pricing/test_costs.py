"""What calls and runs cost: from the table or the flow's price, and how a cost reads."""

from __future__ import annotations

import pytest

from roost.events import (
    FlowEvent,
    FlowRecord,
    LlmAttempt,
    LlmCallEvent,
    LlmUsage,
    RunStartEvent,
)
from roost.pricing import (
    Cost,
    RunCost,
    cost_of,
    run_cost,
    short_text,
)
from tests.fakes.pricing import FLOW, providers_of


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
