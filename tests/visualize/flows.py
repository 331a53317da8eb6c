"""Flows and hand-built event logs for the visualize tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from roost.events import Event, parse_event
from roost.flow.models import Flow

DATA = Path(__file__).parent / "data"
RUN = "run-test"
WRITER = 'writer "quoted" <b>&{x}'  # team.yaml's agent named in DOT and HTML syntax


def load(name: str) -> Flow:
    """A flow from tests/visualize/data, validated by the models alone."""
    return Flow.model_validate(yaml.safe_load((DATA / name).read_text(encoding="utf-8")))


def big_flow(agents: int = 30) -> Flow:
    """``agents`` agents: three channels of model agents with transitions, people, a pair."""
    names = [f"agent{i:02d}" for i in range(agents - 3)]
    thirds = [names[i::3] for i in range(3)]
    spec: dict[str, Any] = {
        "roost": 1,
        "name": f"big-{agents}",
        "defaults": {"provider": "mock"},
        "providers": {
            "mock": {"kind": "scripted", "replies": ["ok"]},
            "gpt": {"kind": "openai", "model": "gpt-4o-mini"},
        },
        "tools": {"lookup": {"python": "tools_mod:lookup"}, "add": {"python": "tools_mod:add"}},
        "agents": {name: {"role": f"You are {name}.", "provider": "gpt"} for name in names},
        "channels": {},
        "start": {"from": "USER", "to": "room0", "content": "Begin."},
    }
    spec["agents"][names[0]]["functions"] = ["lookup", "add"]
    spec["agents"]["USER"] = {"interrupt": "ALWAYS"}
    spec["agents"]["auditor"] = {"interrupt": "ALWAYS", "role": "A second person."}
    spec["agents"]["critic"] = {"role": "Talks to the auditor alone."}
    for index, members in enumerate(thirds):
        room = [*members, "USER"] if index == 0 else members
        transitions = {m: [members[(j + 1) % len(members)]] for j, m in enumerate(members)}
        if index == 0:
            transitions[members[-1]] = [members[0], "USER"]
            transitions["USER"] = [members[0]]
        spec["channels"][f"room{index}"] = {
            "members": room,
            "director": {"strategy": ["llm", "round_robin", "random"][index], "provider": "gpt"},
            "transitions": transitions,
        }
    return Flow.model_validate(spec)


class Log:
    """Builds an event log by hand, numbering seq and stamping times."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def add(self, type_: str, **fields: Any) -> Log:
        seq = len(self.events)
        data = {"seq": seq, "run": RUN, "ts": f"2026-01-01T00:00:{seq % 60:02d}Z", "type": type_}
        if "from_" in fields:
            fields["from"] = fields.pop("from_")
        self.events.append(parse_event({**data, **fields}))
        return self

    def message(self, source: str, target: str, content: str) -> Log:
        return self.add("message", from_=source, to=target, content=content)

    def llm(self, node: str, text: str, prompt: int = 10, completion: int = 5) -> Log:
        usage = {"prompt_tokens": prompt, "completion_tokens": completion}
        return self.add(
            "llm_call",
            node=node,
            provider="gpt",
            model="gpt-4o-mini",
            request_digest="sha256:0",
            response={"text": text},
            usage=usage,
        )


def team_run(end: str = "terminated") -> list[Event]:
    """A run of team.yaml: a tool call, director choices, a pause, then ``end``."""
    flow_record = {"path": "team.yaml", "name": "math-team", "hash": "sha256:0", "text": ""}
    log = Log().add("run_start", flow=flow_record)
    log.message("USER", "team", "How much is 2 + 2?")
    log.llm("team", "mathematician", 40, 2)
    log.add(
        "select",
        channel="team",
        candidates=["mathematician", "reviewer"],
        chosen="mathematician",
        by="llm",
    )
    log.llm("mathematician", "", 50, 8)
    sum_args = {"a": 2, "b": 2}
    log.add("tool_call", agent="mathematician", id="c1", name="math__add", arguments=sum_args)
    log.add("tool_result", agent="mathematician", id="c1", name="math__add", content="4")
    log.llm("mathematician", "2 + 2 = 4", 70, 6)
    log.message("mathematician", "team", "2 + 2 = 4")
    log.add(
        "select", channel="team", candidates=["reviewer"], chosen="reviewer", by="only_candidate"
    )
    log.llm("reviewer", "Correct </script><b>bold</b>", 90, 12)
    log.message("reviewer", "team", "Correct </script><b>bold</b>")
    log.add("select", channel="team", candidates=["USER", "mathematician"], chosen="USER", by="llm")
    log.add("interrupt", from_="USER", to="team", reason="human")
    if end == "paused":
        return log.events
    log.add("resume", from_="USER", to="team", feedback="Now 3 + 3?")
    log.message("USER", "team", "Now 3 + 3?")
    log.add(
        "select",
        channel="team",
        candidates=["mathematician"],
        chosen="mathematician",
        by="only_candidate",
    )
    if end == "error":
        log.add(
            "llm_call",
            node="mathematician",
            provider="gpt",
            model="gpt-4o-mini",
            request_digest="sha256:1",
            error="rate limited",
        )
        log.add("error", from_="mathematician", to="team", content="provider 'gpt': rate limited")
        return log.events
    log.llm("mathematician", "6", 120, 3)
    log.message("mathematician", "team", "6")
    log.add("terminate", node="team", reason="max_rounds")
    return log.events


def two_run() -> list[Event]:
    """A run of two.yaml: the question, the answer, TERMINATE."""
    flow_record = {"path": "two.yaml", "name": "two-agents", "hash": "sha256:0", "text": ""}
    log = Log().add("run_start", flow=flow_record)
    log.message("USER", "assistant", "How much is 2 + 2?")
    log.llm("assistant", "4").message("assistant", "USER", "4")
    log.add("interrupt", from_="USER", to="assistant", reason="human")
    log.add("resume", from_="USER", to="assistant", feedback="thanks")
    log.message("USER", "assistant", "thanks")
    log.llm("assistant", "TERMINATE").message("assistant", "USER", "TERMINATE")
    log.add("terminate", node="USER")
    return log.events
