"""TERMINATE and INTERRUPT as models write them: the end, whole and anywhere rules."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from roost.engine import Runner
from roost.flow.json_schema import flow_schema
from roost.flow.markers import MarkerRule, marker_in
from roost.ports import MemoryLog
from tests.cli_inprocess import run_cli
from tests.flow.conftest import load, problems

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("reply", "rule", "found"),
    [
        ("Checked: 4 is right. TERMINATE", "end", "TERMINATE"),
        ("  TERMINATE\n", "end", "TERMINATE"),
        ("Checked.\nTERMINATE  ", "end", "TERMINATE"),
        ("Please TERMINATED", "end", None),
        ("XTERMINATE", "end", None),
        ("_TERMINATE", "end", None),
        ("ok:TERMINATE", "end", "TERMINATE"),
        ("TERMINATE now", "end", None),
        ("Checked. terminate", "end", None),  # case matters
        ("Checked. TERMINATE.", "end", None),  # the reply ends with '.', not the word
        ("Ask the person. INTERRUPT", "end", "INTERRUPT"),
        ("INTERRUPT TERMINATE", "end", "TERMINATE"),
        ("Checked: 4 is right. TERMINATE", "whole", None),
        ("\n TERMINATE \n", "whole", "TERMINATE"),
        ("INTERRUPT", "whole", "INTERRUPT"),
        ("I will TERMINATE the run now.", "anywhere", "TERMINATE"),
        ("TERMINATED", "anywhere", None),
        ("Say (INTERRUPT) please", "anywhere", "INTERRUPT"),
        ("INTERRUPT, then TERMINATE", "anywhere", "TERMINATE"),  # TERMINATE is checked first
        ("nothing here", "anywhere", None),
        ("été TERMINATE", "end", "TERMINATE"),
        ("éTERMINATE", "end", None),  # a letter of any script glues the word
    ],
)
def test_marker_rules(reply: str, rule: MarkerRule, found: str | None) -> None:
    assert marker_in(reply, rule) == found


PAIR = """
roost: 1
defaults: {provider: mock, max_rounds: 6DEFAULTS}
providers:
  mock: {kind: scripted, replies: ["Let me add: 4.", "Checked: 4 is right. TERMINATE"],
         when_exhausted: repeat_last}
agents:
  USER: {role: A person.AGENT}
  bot: {role: You help.AGENT}
start: {from: USER, to: bot, content: "2 + 2?"}
"""


async def run(defaults: str = "", agent: str = "") -> list[object]:
    log = MemoryLog("r")
    flow = load(PAIR.replace("DEFAULTS", defaults).replace("AGENT", agent))
    await Runner(flow=flow, log=log).start()
    return list(log.load())


async def test_a_reply_ending_with_terminate_ends_the_run_by_default() -> None:
    events = await run()
    last = events[-1]
    assert (last.type, last.reason) == ("terminate", "TERMINATE")  # type: ignore[attr-defined]
    said = [e.content for e in events if e.type == "message"]  # type: ignore[attr-defined]
    assert said[-1] == "Checked: 4 is right. TERMINATE"  # recorded as written


async def test_whole_runs_on_until_the_cap() -> None:
    events = await run(defaults=", markers: whole")
    assert events[-1].reason == "max_rounds"  # type: ignore[attr-defined]


async def test_an_agent_rule_wins_over_the_default() -> None:
    events = await run(defaults=", markers: whole", agent=", markers: end")
    assert events[-1].reason == "TERMINATE"  # type: ignore[attr-defined]
    events = await run(agent=", markers: whole")
    assert events[-1].reason == "max_rounds"  # type: ignore[attr-defined]


async def test_interrupt_at_the_end_pauses() -> None:
    text = PAIR.replace("Let me add: 4.", "Shall I go on? INTERRUPT")
    log = MemoryLog("r")
    state = await Runner(
        flow=load(text.replace("DEFAULTS", "").replace("AGENT", "")), log=log
    ).start()
    assert state.status == "paused"
    assert state.pending is not None
    assert (state.pending.from_, state.pending.to) == ("USER", "bot")  # bot said it to USER


def test_an_unknown_rule_is_a_located_error() -> None:
    found = problems(
        """
        roost: 1
        defaults: {markers: round-end}
        agents:
          a: {markers: Whole, provider: p}
        providers: {p: {kind: scripted}}
        """
    )
    assert found == [
        "flow.yaml:3:21: error: markers of defaults: must be one of end, whole, anywhere",
        "flow.yaml:5:16: error: markers of agent 'a': must be one of end, whole, anywhere"
        " (did you mean 'whole'?)",
    ]


def test_the_schema_shows_the_key() -> None:
    schema = flow_schema()
    defaults = schema["$defs"]["Defaults"]["properties"]["markers"]
    assert defaults["enum"] == ["end", "whole", "anywhere"]
    assert defaults["default"] == "end"
    agent = schema["$defs"]["Agent"]["properties"]["markers"]
    assert "anywhere" in json.dumps(agent)


def test_validate_exits_2_on_an_unknown_rule(tmp_path: Path) -> None:
    flow = tmp_path / "f.yaml"
    flow.write_text("roost: 1\ndefaults:\n  markers: last\n")
    done = run_cli("validate", "f.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout.strip().splitlines() == [
        "f.yaml:3:12: error: markers of defaults: must be one of end, whole, anywhere"
    ]
    assert "Traceback" not in done.stderr
