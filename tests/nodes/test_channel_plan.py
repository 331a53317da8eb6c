"""A channel's precomputed plan decides every turn exactly as working it out afresh does."""

from __future__ import annotations

import random

import pytest

from roost.flow.models import Flow
from roost.nodes.channel import ChannelPlan, channel_turn
from roost.runstate import RunState

MEMBERS = ["ann", "ben", "cat", "dan"]


def _flow(strategy: str, allow_repeat: bool, transitions: dict[str, list[str]] | None) -> Flow:
    return Flow.model_validate(
        {
            "roost": 1,
            "name": "plan",
            "defaults": {"max_rounds": 3},
            "agents": {name: {"role": name} for name in [*MEMBERS, "USER"]},
            "channels": {
                "room": {
                    "members": MEMBERS,
                    "max_rounds": 9,
                    "director": {"strategy": strategy, "allow_repeat": allow_repeat, "seed": 4},
                    "transitions": transitions,
                }
            },
        }
    )


@pytest.mark.parametrize("strategy", ["round_robin", "random", "llm", "manual"])
@pytest.mark.parametrize("allow_repeat", [False, True])
@pytest.mark.parametrize(
    "transitions", [None, {"ann": ["ben"], "ben": ["ann", "cat", "dan"], "dan": []}]
)
def test_plan_agrees_with_the_general_rule(
    strategy: str, allow_repeat: bool, transitions: dict[str, list[str]] | None
) -> None:
    flow = _flow(strategy, allow_repeat, transitions)
    plan = ChannelPlan(flow, "room")
    draw = random.Random(7)
    for _ in range(300):
        state = RunState()
        for member in MEMBERS:
            count = draw.choice([0, 0, 1, 2, 3])  # 3 is the members' own cap
            if count:
                state.sent[(member, "room")] = count
        state.sent[("USER", "room")] = 1  # a non-member's message counts for nobody
        last = draw.choice([None, "USER", *MEMBERS])
        if last is not None:
            state.last_into["room"] = last
        state.selects["room"] = draw.randrange(5)
        assert channel_turn(flow, state, "room", plan) == channel_turn(flow, state, "room")
