"""Channels and their directors (sections 3 and 4)."""

from __future__ import annotations

import asyncio
import json

from roost.engine import Runner
from roost.nodes.agent import transcript, transcript_text
from roost.nodes.directors import SELECTION_PROMPT, selection_prompt
from roost.nodes.roles import render, role_context
from roost.ports import MemoryLog
from roost.runstate import RunState
from tests.engine.conftest import channel, make_flow, messages, runner_for, selects

PICK = "\"Pick from {{ candidates | map(attribute='name') | join('/') }}\""


async def test_round_robin_goes_in_member_order_and_the_cap_terminates() -> None:
    runner, log = runner_for(channel())
    state = await runner.start()
    assert state.status == "terminated"
    assert selects(log) == [
        ("x", "round_robin"),
        ("y", "round_robin"),
        ("z", "round_robin"),
        ("x", "round_robin"),
    ]
    assert log.load()[-1].node == "team" and log.load()[-1].reason == "max_rounds"


async def test_a_members_start_message_counts_toward_the_channel_cap() -> None:
    runner, log = runner_for(channel(start_from="x", max_rounds=3))
    await runner.start()
    authored = [m for m in messages(log.load()) if m[1] == "team"]
    assert len(authored) == 3  # the start message from x, then two replies
    # x spoke first, so round robin continues after x
    assert [c for c, _ in selects(log)] == ["y", "z"]


async def test_the_only_candidate_is_chosen_without_asking() -> None:
    runner, log = runner_for(
        channel(strategy="llm", members="[x, y]", start_from="x", max_rounds=2)
    )
    await runner.start()
    assert selects(log) == [("y", "only_candidate")]
    assert [e.node for e in log.load() if e.type == "llm_call"] == ["y"]


async def test_allow_repeat_keeps_the_last_speaker_a_candidate() -> None:
    runner, log = runner_for(
        channel(director_extra=", allow_repeat: true", start_from="x", max_rounds=2)
    )
    await runner.start()
    assert log.load()[2].candidates == ("x", "y", "z")


async def test_round_robin_moves_on_even_when_the_last_speaker_may_repeat() -> None:
    runner, log = runner_for(channel(director_extra=", allow_repeat: true", max_rounds=4))
    await runner.start()
    assert [c for c, _ in selects(log)] == ["x", "y", "z", "x"]


async def test_transitions_narrow_the_candidates() -> None:
    extra = "    transitions: {x: [z], z: [y], y: [x]}"
    runner, log = runner_for(channel(extra=extra, start_from="x", max_rounds=4))
    await runner.start()
    assert [c for c, _ in selects(log)] == ["z", "y", "x"]
    assert next(e.candidates for e in log.load() if e.type == "select") == ("z",)


async def test_members_at_their_own_cap_stop_being_candidates() -> None:
    runner, log = runner_for(
        channel(
            members="[x, y]", defaults=", max_rounds: 2", max_rounds=10, replies="[a, b, c, d, e]"
        )
    )
    state = await runner.start()
    assert state.status == "terminated"
    assert log.load()[-1].reason == "no_candidate"
    authored = [m[0] for m in messages(log.load()) if m[1] == "team"]
    assert authored.count("x") == 2 and authored.count("y") == 2


async def test_random_is_seeded_and_the_same_in_a_new_process() -> None:
    text = channel(
        strategy="random",
        director_extra=", seed: 7",
        max_rounds=6,
        replies="[a, INTERRUPT, c, d, e, f, g]",
    )
    whole, whole_log = runner_for(text.replace("INTERRUPT", "b"))
    await whole.start()
    log = MemoryLog("r")
    flow = make_flow(text)
    state = await Runner(flow=flow, log=log).start()
    while state.status == "paused":
        state = await Runner(flow=flow, log=log).continue_(
            ""
        )  # a fresh runner, as a new process would
    # The draws are pinned, not only compared: a run recorded by one version of roost
    # must draw the same when a later version continues it.
    assert selects(whole_log) == [
        ("x", "random"),
        ("z", "random"),
        ("y", "random"),
        ("x", "random"),
        ("z", "random"),
        ("y", "random"),
    ]
    assert selects(log) == selects(whole_log)


async def test_an_always_member_chosen_by_the_director_pauses_the_run() -> None:
    runner, log = runner_for(
        channel(members="[x, USER]", user="{interrupt: ALWAYS}", start_from="x", max_rounds=3)
    )
    state = await runner.start()
    assert state.status == "paused"
    assert (state.pending.from_, state.pending.to) == ("USER", "team")  # type: ignore[union-attr]
    state = await runner.continue_("my view")
    assert ("USER", "team", "my view") in messages(log.load())
    assert state.status == "terminated"


async def test_a_member_that_says_interrupt_gets_feedback_from_the_channel() -> None:
    runner, log = runner_for(channel(replies="[INTERRUPT, {echo: last}, c, d]", max_rounds=3))
    state = await runner.start()
    assert (state.pending.from_, state.pending.to) == ("team", "x")  # type: ignore[union-attr]
    state = await runner.continue_("use metric units")
    msgs = messages(log.load())
    assert ("team", "x", "use metric units") in msgs
    echoed = msgs[-2][2] if msgs[-1][0] != "x" else msgs[-1][2]
    transcript = next(m[2] for m in msgs if m[2].startswith("The conversation"))
    assert "@team: use metric units" in transcript and "@USER: Go" in transcript
    assert echoed


async def test_continuing_a_channel_at_its_cap_terminates_before_the_feedback() -> None:
    text = channel(replies="[a, INTERRUPT, c, d]", members="[x, y]", max_rounds=2)
    runner, log = runner_for(text)
    state = await runner.start()
    assert (state.pending.from_, state.pending.to) == ("team", "y")  # type: ignore[union-attr]
    state = await runner.continue_("say more")
    assert state.status == "terminated"
    last = log.load()[-1]
    assert (last.type, last.node, last.reason) == ("terminate", "team", "max_rounds")
    assert [m for m in messages(log.load()) if m[1] == "team" and m[0] != "USER"] == [
        ("x", "team", "a"),
        ("y", "team", "INTERRUPT"),
    ]


async def test_feedback_to_a_member_at_its_own_cap_goes_back_to_the_director() -> None:
    text = channel(replies="[a, INTERRUPT, c, d]", defaults=", max_rounds: 1", max_rounds=9)
    runner, log = runner_for(text)
    state = await runner.start()
    assert (state.pending.from_, state.pending.to) == ("team", "y")  # type: ignore[union-attr]
    state = await runner.continue_("say more")
    assert ("team", "y", "say more") in messages(log.load())
    # y has used its one message: z, the only member left under its cap, speaks next.
    assert [(m[0], m[2]) for m in messages(log.load()) if m[1] == "team"][1:] == [
        ("x", "a"),
        ("y", "INTERRUPT"),
        ("z", "c"),
    ]
    assert selects(log)[-1] == ("z", "only_candidate")
    assert state.status == "terminated" and log.load()[-1].reason == "no_candidate"


async def test_llm_director_answers_are_parsed_corrected_then_replaced() -> None:
    text = channel(
        strategy="llm",
        director_extra=", provider: boss, seed: 3",
        max_rounds=4,
    ).replace(
        "boss: {kind: scripted, replies: []}",
        'boss: {kind: scripted, replies: [" @y ", nobody, z, x, x, wrong]}',
    )
    runner, log = runner_for(text)
    await runner.start()
    got = selects(log)
    assert got[0] == ("y", "llm")
    assert got[1] == ("z", "llm_retry")
    assert got[2] == ("x", "llm")
    assert got[3] == ("y", "fallback")  # seed 3 draws y among y and z
    boss_calls = [e for e in log.load() if e.type == "llm_call" and e.node == "team"]
    assert len(boss_calls) == 6


async def test_llm_director_sees_candidates_and_conversation() -> None:
    text = channel(strategy="llm", director_extra=", provider: boss", max_rounds=1).replace(
        "boss: {kind: scripted, replies: []}", "boss: {kind: scripted, replies: [{echo: last}, x]}"
    )
    runner, log = runner_for(text)
    await runner.start()
    # the echo is no candidate, so a corrective retry followed and named x
    assert selects(log) == [("x", "llm_retry")]


async def test_llm_director_lists_descriptions_or_rendered_roles() -> None:
    text = (
        channel(strategy="llm", director_extra=", provider: boss", max_rounds=1)
        .replace(
            "boss: {kind: scripted, replies: []}",
            "boss: {kind: scripted, replies: [{echo: last}, x]}",
        )
        .replace(
            "x: {role: X role.}",
            "x: {role: 'X, {{ vars.persona }} in {{ members | join(\"+\") }}.'}",
        )
        .replace("name: chan", "name: chan\nvars: {persona: a careful one}")
    )
    runner, log = runner_for(text)
    await runner.start()
    shown = next(e for e in log.load() if e.type == "llm_call" and e.node == "team")
    assert "- x: X, a careful one in x+y+z." in shown.response.text
    assert "- y: the y expert" in shown.response.text
    assert "- z: Z role." in shown.response.text


async def test_a_flow_may_replace_the_selection_prompt() -> None:
    text = channel(
        strategy="llm",
        director_extra=", provider: boss, prompt: " + PICK,
        max_rounds=1,
    ).replace(
        "boss: {kind: scripted, replies: []}", "boss: {kind: scripted, replies: [{echo: last}, y]}"
    )
    runner, log = runner_for(text)
    await runner.start()
    calls = [e for e in log.load() if e.type == "llm_call" and e.node == "team"]
    assert calls[0].response.text == "Pick from x/y/z"


# The built-in prompt as it was written before its transcript became one text: the
# loop over ``conversation`` must print exactly what ``conversation_text`` now does.
LOOPED_PROMPT = SELECTION_PROMPT.replace(
    "{{ conversation_text }}\n",
    "{% for line in conversation %}{{ line }}\n"
    "{% else %}(nothing has been said yet)\n{% endfor %}\n",
)


REPLIES = """[a, '{{ b }}', "c\\nd", e, f, g, h, i, j]"""  # a template and a newline, as text


def director_requests(prompt: str = "") -> tuple[list[str], list[str]]:
    """The team's request digests and the echoed prompts, over a run of eight choices."""
    boss = "[{echo: last}, x, y, {echo: last}, z, x, y, {echo: last}, y, z, x, y]"
    extra = ", provider: boss, allow_repeat: true" + (
        f", prompt: {json.dumps(prompt)}" if prompt else ""
    )
    text = channel(strategy="llm", director_extra=extra, max_rounds=9, replies=REPLIES).replace(
        "boss: {kind: scripted, replies: []}", f"boss: {{kind: scripted, replies: {boss}}}"
    )
    runner, log = runner_for(text)
    asyncio.run(runner.start())
    calls = [e for e in log.load() if e.type == "llm_call" and e.node == "team"]
    echoed = [c.response.text for c in calls if c.response and c.response.text.startswith("You")]
    return [c.request_digest for c in calls], echoed


def test_the_built_in_prompt_shows_the_transcript_as_a_loop_over_it_would() -> None:
    built_in, echoed = director_requests()
    looped, echoed_looped = director_requests(LOOPED_PROMPT)
    assert len(built_in) >= 8 and built_in == looped
    assert echoed == echoed_looped and len(echoed) == 3
    assert "(nothing has been said yet)" not in echoed[0]
    assert "The conversation so far:\n@USER: Go\n\nAnswer" in echoed[0]
    # each later prompt holds the one before's lines and the messages since, in order
    assert "so far:\n@USER: Go\n@x: a\n@y: {{ b }}\n\nAnswer" in echoed[1]
    assert "so far:\n@USER: Go\n@x: a\n@y: {{ b }}\n@z: c\nd\n@x: e\n" in echoed[2]


def test_a_director_asked_before_anyone_spoke_is_told_so() -> None:
    flow, state = make_flow(channel(strategy="llm")), RunState()
    assert transcript(state, "team") == [] and transcript_text(state, "team") == ""
    prompt = selection_prompt(flow, state, "team", ("x", "y"))
    assert prompt == render(
        LOOPED_PROMPT,
        **role_context(flow, state, "team", ["x", "y", "z"], "team"),
        channel="team",
        candidates=[{"name": "x", "role": "X role."}, {"name": "y", "role": "the y expert"}],
        conversation=[],
    )
    assert "so far:\n(nothing has been said yet)\n\nAnswer" in prompt


async def test_random_choices_are_labelled_random() -> None:
    runner, log = runner_for(channel(strategy="random", director_extra=", seed: 11", max_rounds=5))
    await runner.start()
    assert selects(log) == [
        ("x", "random"),
        ("z", "random"),
        ("y", "random"),
        ("x", "random"),
        ("y", "random"),
    ]


async def test_an_always_member_given_no_feedback_answers_through_its_provider() -> None:
    user = "{interrupt: ALWAYS, role: the person}"
    runner, log = runner_for(channel(members="[x, USER]", user=user, start_from="x", max_rounds=3))
    state = await runner.start()
    assert (state.pending.from_, state.pending.to) == ("USER", "team")  # type: ignore[union-attr]
    state = await runner.continue_("")
    calls = [e for e in log.load() if e.type == "llm_call"]
    assert calls[0].node == "USER" and calls[0].provider == "mock"
    assert messages(log.load())[1] == ("USER", "team", "a")
    assert state.status == "terminated"


async def test_a_repeated_speaker_named_by_the_director_is_corrected() -> None:
    text = channel(strategy="llm", director_extra=", provider: boss", max_rounds=2).replace(
        "boss: {kind: scripted, replies: []}", "boss: {kind: scripted, replies: [x, x, y]}"
    )
    runner, log = runner_for(text)
    await runner.start()
    # x spoke last and allow_repeat is off: naming x again is corrected, not obeyed.
    assert selects(log) == [("x", "llm"), ("y", "llm_retry")]
