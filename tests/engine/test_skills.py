"""An agent with skills is shown their list in its system prompt and reads one with skill#read;
the list is recorded, so a replay builds the same requests whatever the folders hold."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost import load_flow
from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.events import LlmCallEvent, MessageEvent, SkillInfo, SkillsEvent, ToolResultEvent
from roost.ports import MemoryLog
from tests.fakes.skills import write_skill

if TYPE_CHECKING:
    from pathlib import Path

    from roost.events import Event

FLOW = """\
roost: 1
name: helpdesk
providers:
  script:
    kind: scripted
    replies: REPLIES
agents:
  person: {interrupt: ALWAYS}
  helper:
    role: You answer questions about drinks.
    provider: script
    skills: SKILLS
  other: {provider: script, skills: [coffee]}
start: {from: person, to: helper, content: How do I make tea?}
"""

INTRO = (
    "You have skills: instructions for particular tasks, kept apart until a task needs them. "
    "When a task matches a skill's description, call the tool skill__read with the skill's "
    "name to read its instructions, then follow them.\nSkills:\n"
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A flow's folder with three skills beside it."""
    write_skill(tmp_path / "skills", "tea", "Brewing tea.", body="Boil water. Steep 3 minutes.")
    write_skill(tmp_path / "skills", "coffee", "Brewing coffee.", body="Grind the beans.")
    write_skill(tmp_path / "skills", "cocoa", "Making cocoa.", body="Warm the milk.")
    return tmp_path


def flow_file(folder: Path, skills: str, replies: str) -> Path:
    file = folder / "flow.yaml"
    file.write_text(FLOW.replace("SKILLS", skills).replace("REPLIES", replies))
    return file


async def run(file: Path) -> list[Event]:
    log = MemoryLog("run-1")
    await Runner(flow=load_flow(file), log=log).start()
    return log.load()


def replies(events: list[Event]) -> list[str]:
    return [e.content for e in events if isinstance(e, MessageEvent) and e.from_ == "helper"]


async def test_a_list_of_skills_is_shown_in_its_order_after_the_role(folder: Path) -> None:
    events = await run(flow_file(folder, "[tea, cocoa]", "[{echo: system}]"))
    assert replies(events) == [
        "You answer questions about drinks.\n\n"
        + INTRO
        + "- tea: Brewing tea.\n- cocoa: Making cocoa."
    ]


async def test_all_shows_every_skill_found_by_name(folder: Path) -> None:
    events = await run(flow_file(folder, "all", "[{echo: system}]"))
    assert replies(events) == [
        "You answer questions about drinks.\n\n"
        + INTRO
        + "- cocoa: Making cocoa.\n- coffee: Brewing coffee.\n- tea: Brewing tea."
    ]


async def test_the_skills_the_agents_use_are_recorded_once_before_the_request(
    folder: Path,
) -> None:
    events = await run(flow_file(folder, "[tea]", "[{echo: system}]"))
    recorded = [e for e in events if isinstance(e, SkillsEvent)]
    assert [e.skills for e in recorded] == [
        (
            SkillInfo(name="coffee", description="Brewing coffee.", source="flow"),
            SkillInfo(name="tea", description="Brewing tea.", source="flow"),
        )
    ]  # cocoa: no agent lists it
    assert isinstance(events[events.index(recorded[0]) + 1], LlmCallEvent)


READ_TEA = "[{tool_calls: [{name: skill__read, arguments: {name: tea}}]}, Steep it. TERMINATE]"


async def test_skill_read_gives_the_body_of_the_skill(folder: Path) -> None:
    events = await run(flow_file(folder, "[tea]", READ_TEA))
    (result,) = [e for e in events if isinstance(e, ToolResultEvent)]
    assert (result.name, result.content, result.is_error) == (
        "skill__read",
        "Boil water. Steep 3 minutes.",
        False,
    )
    calls = [e for e in events if isinstance(e, LlmCallEvent)]
    assert all(call.tools == ("skill__read",) for call in calls)


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("coffee", "no skill named 'coffee'; your skills: tea"),
        ("tee", "no skill named 'tee' (did you mean 'tea'?); your skills: tea"),
    ],
)
async def test_skill_read_refuses_a_skill_the_agent_does_not_have(
    folder: Path, name: str, answer: str
) -> None:
    script = READ_TEA.replace("name: tea", f"name: {name}")
    events = await run(flow_file(folder, "[tea]", script))
    (result,) = [e for e in events if isinstance(e, ToolResultEvent)]
    assert (result.content, result.is_error) == (answer, True)


async def test_a_tool_limit_never_ranks_skill_read_out(folder: Path) -> None:
    text = flow_file(folder, "[tea]", READ_TEA).read_text()
    text = text.replace(
        "    skills: [tea]",
        "    skills: [tea]\n    tool_limit: 1\n    functions: [add, mean]",
    ).replace(
        "agents:",
        "tools:\n  add: {python: 'operator:add'}\n  mean: {python: 'statistics:fmean'}\nagents:",
    )
    (folder / "flow.yaml").write_text(text)
    events = await run(folder / "flow.yaml")
    calls = [e for e in events if isinstance(e, LlmCallEvent)]
    assert len(calls[0].tools) == 2
    assert calls[0].tools[-1] == "skill__read"


async def test_a_replay_is_identical_once_the_skills_have_changed(folder: Path) -> None:
    file = flow_file(folder, "all", "[{echo: system}, " + READ_TEA[1:])
    log = MemoryLog("run-1")
    runner = Runner(flow=load_flow(file), log=log)
    await runner.start()
    await runner.continue_("And coffee?")
    recorded = log.load()
    write_skill(folder / "skills", "tea", "Tea, changed.", body="Something else.")
    (folder / "skills" / "coffee" / "SKILL.md").unlink()
    report = await replay_run(None, recorded)
    assert report.difference is None
    assert report.compared == len(recorded)


async def test_a_changed_skill_is_recorded_again_at_the_next_reply(folder: Path) -> None:
    file = flow_file(folder, "[tea]", "[{echo: system}]\n    when_exhausted: repeat_last")
    log = MemoryLog("run-1")
    await Runner(flow=load_flow(file), log=log).start()
    write_skill(folder / "skills", "tea", "Tea, changed.")
    runner = Runner(flow=load_flow(file), log=log)  # another process continues the run
    await runner.continue_("Again?")
    events = log.load()
    lists = [[s.description for s in e.skills] for e in events if isinstance(e, SkillsEvent)]
    assert lists == [["Brewing coffee.", "Brewing tea."], ["Brewing coffee.", "Tea, changed."]]
    assert replies(events)[-1].endswith("- tea: Tea, changed.")
    report = await replay_run(None, events)
    assert report.difference is None


async def test_a_skill_gone_since_validation_stops_the_reply_with_one_line(folder: Path) -> None:
    file = flow_file(folder, "[tea]", "[{echo: system}]")
    flow = load_flow(file)
    (folder / "skills" / "tea" / "SKILL.md").unlink()
    log = MemoryLog("run-1")
    state = await Runner(flow=flow, log=log).start()
    assert state.status == "error"
    assert state.pending is not None
    assert state.pending.content == "agent 'helper': no skill named 'tea'"


def test_a_transcript_names_the_skills_found() -> None:
    from roost.cli.transcript import event_line

    tea = SkillInfo(name="tea", description="Brewing tea.", source="flow")
    event = SkillsEvent(seq=2, run="r", ts="2026-12-01T00:00:00.000000Z", skills=(tea,))
    assert event_line(event) == "[dim]   2[/] [dim]skills found: tea[/]"


async def test_a_secret_in_a_skill_is_masked_and_recorded_once(folder: Path) -> None:
    write_skill(folder / "skills", "tea", "Brewing tea with the key sekrit-value-123.")
    script = "[{echo: system}]\n    when_exhausted: repeat_last\n    api_key: ${TEA_KEY}"
    flow = load_flow(flow_file(folder, "[tea]", script), environ={"TEA_KEY": "sekrit-value-123"})
    log = MemoryLog("run-1")
    runner = Runner(flow=flow, log=log)
    await runner.start()
    await runner.continue_("Again?")
    events = log.load()
    (recorded,) = [e for e in events if isinstance(e, SkillsEvent)]
    assert recorded.skills[1].description == "Brewing tea with the key ***."
    assert all("sekrit" not in e.model_dump_json() for e in events)
    assert replies(events)[-1].endswith("- tea: Brewing tea with the key ***.")


async def test_a_reply_resumed_after_a_tool_approval_keeps_its_list(folder: Path) -> None:
    script = "[{tool_calls: [{name: mean, arguments: {data: [2, 4]}}]}, {echo: system}]"
    text = flow_file(folder, "[tea]", script).read_text()
    text = text.replace("    skills: [tea]", "    skills: [tea]\n    functions: [mean]").replace(
        "agents:", "tools:\n  mean: {python: 'statistics:fmean', approval: always}\nagents:"
    )
    (folder / "flow.yaml").write_text(text)
    log = MemoryLog("run-1")
    state = await Runner(flow=load_flow(folder / "flow.yaml"), log=log).start()
    assert state.pending is not None
    assert state.pending.reason == "tool_approval"  # type: ignore[union-attr]
    write_skill(folder / "skills", "tea", "Tea, changed while the person decided.")
    await Runner(flow=load_flow(folder / "flow.yaml"), log=log).continue_("yes")
    events = log.load()
    assert len([e for e in events if isinstance(e, SkillsEvent)]) == 1
    assert replies(events)[-1].endswith("- tea: Brewing tea.")


async def test_the_context_estimate_and_compact_count_the_skills_list(folder: Path) -> None:
    """``roost show``'s context line and ``/compact`` measure the system prompt the model
    was sent, the list of skills included."""
    from roost.context_window import estimate
    from roost.engine.compaction import context_sizes
    from roost.events import CompactEvent
    from roost.runstate import fold

    answers = "[{echo: system}, Boil water., Steep it., Add milk., A short summary.]"
    file = flow_file(folder, "[tea, cocoa]", answers)
    log = MemoryLog("run-1")
    runner = Runner(flow=load_flow(file), log=log)
    await runner.start()
    for question in ("How hot?", "How long?", "Milk?"):
        await runner.continue_(question)
    sent = replies(log.load())[0]  # the system prompt itself, echoed
    assert INTRO in sent
    state = fold(log.load())
    chars = state.view_chars("helper", "person")
    anchor = state.views.get(("helper", "person"))
    expected = estimate(anchor, chars, len(sent), state.chars_per_token("script"))
    [size] = context_sizes(runner.flow, state)
    assert (size.node, size.tokens) == ("helper", expected)
    await runner.compact()
    [compact] = [e for e in log.load() if isinstance(e, CompactEvent)]
    assert compact.tokens_before == expected
