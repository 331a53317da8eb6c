"""A run's budgets in words: each limit with what was spent, and each decision in one line."""

from __future__ import annotations

import roost
from roost.budget_text import amount, bare, budget_lines, budget_words, written_limits
from roost.events import BudgetEvent
from roost.ports import MemoryLog
from roost.runstate import fold
from roost.testing import flow_from_yaml

ONE_CALL = """\
roost: 1
name: b
budget: {model_calls: 1, tokens: 1000000}
agents:
  USER: {role: u}
  bot: {role: b, budget: {cost: 2.5}}
start: {from: USER, to: bot, content: hi}
"""


def budget(**fields: object) -> BudgetEvent:
    return BudgetEvent.model_validate({"seq": 4, "run": "r", "ts": "t", **fields})


def test_amounts_read_as_people_read_them() -> None:
    assert amount("cost", 0.4321) == "$0.43"
    assert amount("tokens", 1200) == "1,200 tokens"
    assert amount("model_calls", 4) == "4 model calls"
    assert amount("seconds", 2.25) == "2.2 s"
    assert (bare("tokens", 1200), bare("cost", 0.4321)) == ("1,200", "$0.43")


def test_each_decision_is_one_line_of_what_was_spent_and_what_happens_now() -> None:
    stop = budget(limit="tokens", spent=900, allowed=1000, action="stop", estimate=300)
    assert budget_words(stop) == (
        "budget: 900 of 1,000 tokens spent; the next would add 300; the run stops"
    )
    switch = budget(limit="cost", spent=1, allowed=1, action="switch_to", agent="bot", provider="p")
    assert budget_words(switch) == "bot's budget: $1.00 of $1.00 spent; switching to p"
    raised = budget(limit="model_calls", spent=3, allowed=10, action="raised")
    assert budget_words(raised) == "budget: the model_calls limit is now 10 model calls"


def test_a_runs_limits_are_its_flows_with_what_was_spent_and_what_stopped_it() -> None:
    log = MemoryLog("r1")
    roost.run_sync(flow_from_yaml(ONE_CALL, replies=["one", "two"]), log=log)
    state = fold(log.load())
    assert written_limits(state) == [
        (None, "tokens", 1000000.0),
        (None, "model_calls", 1.0),
        ("bot", "cost", 2.5),
    ]
    lines = budget_lines(state)
    assert lines == [
        "budget: tokens 0 of 1,000,000 tokens spent, 1,000,000 tokens left",
        "budget: model_calls 1 of 1 model calls spent, 0 model calls left, stopped the run",
        "bot's budget: cost $0.00 of $2.50 spent, $2.50 left",
    ]
