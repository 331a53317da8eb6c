"""A channel's two caps meeting: its own ``max_rounds`` and each member's ``defaults.max_rounds``.

While no member is at its own cap a channel takes its turns from a plan worked
out once; once one is, the general path decides. These tests put the channel's
cap on that general path. Their oracle is the event log itself: the messages
are counted here by hand, never through the engine's own counting.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.conftest import runner_for

if TYPE_CHECKING:
    from roost.events import Event

MEMBERS = ("x", "y", "z", "w")


def flow_text(
    *,
    members: int,
    member_cap: int,
    channel_cap: int,
    start_from: str = "USER",
    strategy: str = "round_robin",
    allow_repeat: bool = False,
) -> str:
    names = MEMBERS[:members]
    agents = "\n".join(f"  {name}: {{role: {name.upper()} role.}}" for name in names)
    return f"""
roost: 1
name: caps
defaults: {{provider: mock, max_rounds: {member_cap}}}
providers:
  mock: {{kind: scripted, replies: [say], when_exhausted: repeat_last}}
agents:
{agents}
  USER: {{role: A person.}}
channels:
  team:
    members: [{", ".join(names)}]
    max_rounds: {channel_cap}
    role: You direct the team.
    director: {{strategy: {strategy}, seed: 5, allow_repeat: {str(allow_repeat).lower()}}}
start: {{from: {start_from}, to: team, content: Go}}
"""


def authors(events: list[Event], members: tuple[str, ...]) -> list[str]:
    """Who wrote each member-authored message into the channel, in order (start included)."""
    found = []
    for event in events:
        if event.type == "message" and event.to == "team" and event.from_ in members:
            found.append(event.from_)
    return found


def ending(events: list[Event]) -> tuple[str, Any, Any]:
    last = events[-1]
    return last.type, getattr(last, "node", None), getattr(last, "reason", None)


async def test_a_member_reaching_its_own_cap_with_the_channels_last_message_ends_the_run() -> None:
    # x's second message is both its own last (cap 2) and the channel's fourth (cap 4).
    runner, log = runner_for(flow_text(members=3, member_cap=2, channel_cap=4))
    state = await runner.start()
    events = log.load()
    assert authors(events, MEMBERS) == ["x", "y", "z", "x"]
    assert ending(events) == ("terminate", "team", "max_rounds")
    assert state.status == "terminated"


async def test_a_members_start_message_brings_both_caps_together() -> None:
    # x opens (its first), y answers, x again: x at its cap of 2, the channel at its 3.
    runner, log = runner_for(flow_text(members=2, member_cap=2, channel_cap=3, start_from="x"))
    await runner.start()
    events = log.load()
    assert authors(events, MEMBERS) == ["x", "y", "x"]
    assert ending(events) == ("terminate", "team", "max_rounds")


async def test_when_every_member_is_spent_as_the_channel_fills_the_channels_cap_is_named() -> None:
    # Two members of cap 2 and a channel of 4: both caps are reached by the same message,
    # and the channel's cap is checked first.
    runner, log = runner_for(flow_text(members=2, member_cap=2, channel_cap=4))
    await runner.start()
    events = log.load()
    assert authors(events, MEMBERS) == ["x", "y", "x", "y"]
    assert ending(events) == ("terminate", "team", "max_rounds")


def expected_ending(
    written: list[str], names: tuple[str, ...], caps: tuple[int, int], repeat: bool
) -> tuple[str, str, str]:
    """The reason the run must end for, from the counts alone (docs/semantics.md: "Caps")."""
    member_cap, channel_cap = caps
    if len(written) >= channel_cap:
        return ("terminate", "team", "max_rounds")
    counts = Counter(written)
    under = [name for name in names if counts[name] < member_cap]
    if not repeat and written:
        under = [name for name in under if name != written[-1]]
    assert not under, f"the run stopped with {under} still free to speak"
    return ("terminate", "team", "no_candidate")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    members=st.integers(min_value=2, max_value=4),
    member_cap=st.integers(min_value=1, max_value=4),
    channel_cap=st.integers(min_value=1, max_value=12),
    strategy=st.sampled_from(["round_robin", "random"]),
    allow_repeat=st.booleans(),
    member_starts=st.booleans(),
)
def test_no_run_passes_either_cap_and_each_ends_for_the_reason_its_counts_give(
    members: int,
    member_cap: int,
    channel_cap: int,
    strategy: str,
    allow_repeat: bool,
    member_starts: bool,
) -> None:
    names = MEMBERS[:members]
    text = flow_text(
        members=members,
        member_cap=member_cap,
        channel_cap=channel_cap,
        start_from="x" if member_starts else "USER",
        strategy=strategy,
        allow_repeat=allow_repeat,
    )
    runner, log = runner_for(text)
    asyncio.run(runner.start())
    events = log.load()
    written = authors(events, names)
    assert len(written) <= channel_cap
    assert max(Counter(written).values(), default=0) <= member_cap
    if not allow_repeat:  # nobody speaks twice in a row unless repeats are allowed
        assert all(a != b for a, b in pairwise(written))
    assert ending(events) == expected_ending(
        written, names, (member_cap, channel_cap), allow_repeat
    )
