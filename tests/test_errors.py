"""roost's errors: one located line a problem, and the exit status the contract gives each kind."""

from __future__ import annotations

import pytest

from roost.errors import (
    ConcurrentRunError,
    EventLogError,
    EventLogWriteError,
    FlowError,
    ImageError,
    Problem,
    ProviderError,
    RoostError,
    RunNotFoundError,
    RunStateError,
    StoreError,
    TelemetryError,
    UsageError,
)


def test_a_flow_error_says_its_errors_one_located_line_each_and_not_its_warnings() -> None:
    problems = [
        Problem("team.yaml", 3, 5, "unknown agent 'bob'"),
        Problem("team.yaml", 7, 1, "a route nobody takes", "warning"),
        Problem("team.yaml", 9, 2, "no start"),
    ]
    error = FlowError(problems)
    assert str(error) == (
        "team.yaml:3:5: error: unknown agent 'bob'\nteam.yaml:9:2: error: no start"
    )
    assert error.problems == problems and error.exit_code == 2


def test_a_flow_error_of_warnings_only_says_the_warnings() -> None:
    error = FlowError([Problem("team.yaml", 7, 1, "a route nobody takes", "warning")])
    assert str(error) == "team.yaml:7:1: warning: a route nobody takes"


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (RoostError("x"), 1),
        (UsageError("x"), 2),
        (RunStateError("x"), 2),
        (ImageError("x"), 2),
        (RunNotFoundError("x"), 2),
        (ProviderError("llm", "x"), 1),
        (EventLogError("x"), 2),
        (EventLogWriteError("x"), 1),
        (StoreError("x"), 1),
        (ConcurrentRunError("x"), 2),
        (TelemetryError("x"), 1),
    ],
)
def test_each_kind_of_error_exits_with_the_status_the_contract_gives_it(
    error: RoostError, code: int
) -> None:
    assert error.exit_code == code


def test_a_provider_error_names_its_provider_and_keeps_what_was_tried() -> None:
    tried = ({"provider": "llm", "model": "m", "outcome": "429"},)
    error = ProviderError("llm", "rate limited", retryable=True, attempts=tried)
    assert str(error) == "provider 'llm': rate limited"
    assert (error.provider, error.retryable, error.attempts) == ("llm", True, tried)
    assert error.context_overflow is False
