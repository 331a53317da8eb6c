"""``roost compare``'s pairs, totals and judge, on their own (the command: tests/cli)."""

from __future__ import annotations

import random

from roost.flow.models.providers import ScriptedProviderConfig
from roost.flowtest.compare import Pair, Preference, Side, Totals, preference
from roost.providers.scripted import ScriptedProvider


def side(final: str | None, tokens: int = 10, cost: float | None = 0.5, calls: int = 1) -> Side:
    return Side("run", "terminated", final, tokens, cost, calls)


def test_the_totals_count_the_pairs_that_differ_and_what_each_side_spent() -> None:
    pairs = [
        Pair(0, "a", side("yes"), side("no", tokens=3, cost=None), Preference("b", "", ("a", "b"))),
        Pair(1, "b", side("same"), side("same", calls=2)),
        Pair(2, "c", side("x"), side("y"), Preference("tie", "", ("b", "a"))),
    ]
    assert [pair.differs for pair in pairs] == [True, False, True]
    totals = Totals.of(pairs)
    assert (totals.rows, totals.changed) == (3, 2)
    assert totals.preferred == {"a": 0, "b": 1, "tie": 1}
    assert (totals.tokens, totals.cost, totals.model_calls) == ([30, 23], [1.5, 1.0], [3, 4])
    assert pairs[0].as_dict()["judge"] == {"prefer": "b", "reason": "", "shown": ["a", "b"]}
    assert pairs[1].as_dict()["judge"] is None


def judge(*replies: str) -> ScriptedProvider:
    config = ScriptedProviderConfig(kind="scripted", replies=list(replies))
    return ScriptedProvider("grader", config)


async def test_the_judge_s_choice_is_mapped_back_through_the_order_it_was_shown() -> None:
    chooser = random.Random(7)
    first = '{"prefer": "1", "reason": "it came first"}'
    said = [
        await preference(judge(first), "Better.", "Hi", "answer a", "answer b", chooser)
        for _ in range(12)
    ]
    assert {p.shown for p in said} == {("a", "b"), ("b", "a")}
    assert all(p.prefer == p.shown[0] and p.reason == "it came first" for p in said)


async def test_a_reply_that_is_no_preference_is_a_tie_saying_why() -> None:
    said = await preference(judge("I like 1"), "Better.", None, "a", "b", random.Random(1))
    assert (said.prefer, said.reason) == (
        "tie",
        "the judge's reply is not a preference: 'I like 1'",
    )
