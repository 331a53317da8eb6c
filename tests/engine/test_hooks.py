"""Hooks through the engine: Python callables and commands deciding on tool calls and
messages, their decisions in the log, failures that refuse, and replays that run none."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.events import HookEvent, LlmCallEvent, MessageEvent, ToolCallEvent, ToolResultEvent
from roost.flow import read_flow
from roost.ports import MemoryLog
from tests.cli_inprocess import run_cli

if TYPE_CHECKING:
    from pathlib import Path

    from roost.events import Event

GUARDS_PY = """\
import time

def no_rm(call):
    if "rm" in call["arguments"]["cmd"]:
        return {"decision": "refuse", "reason": "rm is not allowed here"}
    if call["arguments"]["cmd"] == "ls":
        return {"decision": "change", "arguments": {"cmd": "ls -a"}}
    return None

def shout(call):
    return {"decision": "change", "content": call["result"]["content"].upper()}

def hide(call):
    return {"decision": "refuse", "reason": "the result is secret"}

def polite(call):
    return {"decision": "change", "content": "please, " + call["content"]}

def no_spam(call):
    if "spam" in call["content"]:
        return {"decision": "refuse", "reason": "I do not answer spam."}

def tag(call):
    return {"decision": "change", "arguments": {"cmd": call["arguments"]["cmd"] + " #tagged"}}

def sleeps(call):
    time.sleep(30)

def crashes(call):
    raise KeyError("cmd")

def says_maybe(call):
    return {"decision": "maybe"}

async def async_allow(call):
    return {"decision": "allow"}

def run(cmd: str) -> str:
    return f"ran {cmd}"
"""

# A command hook: reads the call as JSON on stdin, counts its calls in a file, and
# answers as its first argument says.
HOOK_SCRIPT = """\
import json, sys, time
call = json.load(sys.stdin)
with open("hook_calls.txt", "a") as seen:
    seen.write(call["stage"] + " " + call.get("tool", "") + "\\n")
mode = sys.argv[1]
if mode == "refuse":
    print(json.dumps({"decision": "refuse", "reason": "not on Sundays"}))
elif mode == "change":
    print(json.dumps({"decision": "change", "arguments": {"cmd": call["arguments"]["cmd"] + "!"}}))
elif mode == "allow":
    pass
elif mode == "garbage":
    print("this is not JSON")
elif mode == "exit":
    print("cannot check this", file=sys.stderr)
    sys.exit(3)
elif mode == "sleep":
    time.sleep(30)
"""


def write_flow(
    folder: Path,
    replies: list[Any],
    *,
    hooks: dict[str, Any] | None = None,
    agent: dict[str, Any] | None = None,
    start: str = "list the files",
) -> Path:
    (folder / "guards.py").write_text(GUARDS_PY)
    (folder / "hook.py").write_text(HOOK_SCRIPT)
    flow = {
        "roost": 1,
        "name": "hooked",
        "defaults": {"provider": "p"},
        "providers": {"p": {"kind": "scripted", "replies": replies}},
        "tools": {"sh": {"python": "guards:run"}},
        "agents": {"USER": {"interrupt": "ALWAYS"}, "a": {"functions": ["sh"], **(agent or {})}},
        "start": {"from": "USER", "to": "a", "content": start},
        **({"hooks": hooks} if hooks else {}),
    }
    path = folder / "flow.yaml"
    path.write_text(json.dumps(flow))  # JSON is YAML
    return path


def command(mode: str, timeout: float = 10) -> dict[str, Any]:
    return {"command": sys.executable, "args": ["hook.py", mode], "timeout": timeout}


def sh(*commands: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "sh", "arguments": {"cmd": cmd}} for cmd in commands]}


async def run(path: Path) -> list[Event]:
    log = MemoryLog("r")
    await Runner(flow=read_flow(path), log=log).start()
    return log.load()


def results(events: list[Event]) -> list[tuple[str, bool]]:
    return [(e.content, e.is_error) for e in events if isinstance(e, ToolResultEvent)]


def hooks_of(events: list[Event]) -> list[HookEvent]:
    return [e for e in events if isinstance(e, HookEvent)]


def last_message(events: list[Event]) -> str:
    return [e.content for e in events if isinstance(e, MessageEvent)][-1]


async def test_a_python_hook_allows_refuses_and_changes_calls(tmp_path: Path) -> None:
    hooks = {"before_tool": [{"python": "guards:no_rm"}]}
    path = write_flow(tmp_path, [sh("ls", "rm -rf /", "pwd"), "done"], hooks=hooks)
    events = await run(path)
    assert results(events) == [
        ("ran ls -a", False),
        ("rm is not allowed here", True),
        ("ran pwd", False),
    ]
    # The refused call never ran: only the two others have a tool_call, with the
    # arguments they ran with.
    calls = [(e.id, e.arguments) for e in events if isinstance(e, ToolCallEvent)]
    assert calls == [("call_0_0", {"cmd": "ls -a"}), ("call_0_2", {"cmd": "pwd"})]
    decided = [(h.tool_call, h.decision, h.reason, h.arguments) for h in hooks_of(events)]
    assert decided == [
        ("call_0_0", "change", None, {"cmd": "ls -a"}),
        ("call_0_1", "refuse", "rm is not allowed here", None),
        ("call_0_2", "allow", None, None),
    ]
    assert last_message(events) == "done"


async def test_the_model_is_shown_the_refusal_as_the_tool_result(tmp_path: Path) -> None:
    hooks = {"before_tool": [{"python": "guards:no_rm"}]}
    path = write_flow(tmp_path, [sh("rm x"), {"echo": "last"}], hooks=hooks)
    events = await run(path)
    # echo: last answers with the last message the model was sent: the tool result.
    assert last_message(events) == "rm is not allowed here"


async def test_a_command_hook_reads_the_call_on_stdin_and_decides(tmp_path: Path) -> None:
    for mode, expected in [
        ("refuse", ("not on Sundays", True)),
        ("change", ("ran date!", False)),
        ("allow", ("ran date", False)),
    ]:
        path = write_flow(tmp_path, [sh("date"), "ok"], hooks={"before_tool": [command(mode)]})
        events = await run(path)
        assert results(events) == [expected], mode
        (hook,) = hooks_of(events)
        assert hook.hook == f"{sys.executable} hook.py {mode}"
        assert hook.decision == mode
    # The command ran in the flow's folder, once per call.
    assert (tmp_path / "hook_calls.txt").read_text().splitlines() == ["before_tool sh"] * 3


async def test_after_tool_hooks_change_or_refuse_the_result(tmp_path: Path) -> None:
    path = write_flow(
        tmp_path, [sh("ls"), "ok"], hooks={"after_tool": [{"python": "guards:shout"}]}
    )
    events = await run(path)
    assert results(events) == [("RAN LS", False)]
    (hook,) = hooks_of(events)
    assert (hook.stage, hook.decision, hook.content) == ("after_tool", "change", "RAN LS")
    path = write_flow(tmp_path, [sh("ls"), "ok"], hooks={"after_tool": [{"python": "guards:hide"}]})
    assert results(await run(path)) == [("the result is secret", True)]


async def test_the_agents_hooks_run_after_the_flows_on_what_they_left(tmp_path: Path) -> None:
    hooks = {"before_tool": [{"python": "guards:no_rm"}]}
    agent = {"hooks": {"before_tool": [{"python": "guards:tag"}]}}
    path = write_flow(tmp_path, [sh("ls", "rm y"), "ok"], hooks=hooks, agent=agent)
    events = await run(path)
    assert results(events) == [("ran ls -a #tagged", False), ("rm is not allowed here", True)]
    # The first refusal ends the chain: the agent's hook never saw the rm call.
    assert [(h.hook, h.tool_call) for h in hooks_of(events)] == [
        ("guards:no_rm", "call_0_0"),
        ("guards:tag", "call_0_0"),
        ("guards:no_rm", "call_0_1"),
    ]


async def test_before_reply_rewrites_the_message_the_model_is_shown(tmp_path: Path) -> None:
    agent = {"hooks": {"before_reply": [{"python": "guards:polite"}]}}
    path = write_flow(tmp_path, [{"echo": "last"}], agent=agent, start="hand me the file")
    events = await run(path)
    assert last_message(events) == "please, hand me the file"
    (hook,) = hooks_of(events)
    assert (hook.stage, hook.message, hook.content) == (
        "before_reply",
        1,
        "please, hand me the file",
    )
    # The log keeps what was said; only the agent's view shows it rewritten.
    assert next(e.content for e in events if isinstance(e, MessageEvent)) == "hand me the file"


async def test_before_reply_refuses_without_asking_the_model(tmp_path: Path) -> None:
    agent = {"hooks": {"before_reply": [{"python": "guards:no_spam"}]}}
    path = write_flow(tmp_path, ["never said"], agent=agent, start="buy spam now")
    events = await run(path)
    assert last_message(events) == "I do not answer spam."
    assert not [e for e in events if isinstance(e, LlmCallEvent)]


async def test_a_hook_that_fails_refuses_the_call_and_the_run_goes_on(tmp_path: Path) -> None:
    broken = {
        "guards:sleeps": "hook guards:sleeps failed: timed out after 1 s",
        "guards:crashes": "hook guards:crashes failed: KeyError: 'cmd'",
        "guards:says_maybe": "hook guards:says_maybe failed: unknown decision 'maybe'",
        "guards:missing": "hook guards:missing failed: module 'guards' has no attribute",
    }
    for target, words in broken.items():
        hook = {"python": target, "timeout": 1 if target == "guards:sleeps" else 60}
        path = write_flow(tmp_path, [sh("ls"), "went on"], hooks={"before_tool": [hook]})
        events = await run(path)
        ((content, is_error),) = results(events)
        assert is_error and content.startswith(words), content
        assert "\n" not in content
        assert last_message(events) == "went on"


async def test_a_command_that_fails_refuses_with_its_error(tmp_path: Path) -> None:
    broken = {
        "garbage": (60, "failed: its output is not JSON: 'this is not JSON'"),
        "exit": (60, "failed: exit status 3: cannot check this"),
        "sleep": (1, "failed: timed out after 1 s"),
    }
    for mode, (timeout, words) in broken.items():
        hooks = {"before_tool": [command(mode, timeout=timeout)]}
        path = write_flow(tmp_path, [sh("ls"), "went on"], hooks=hooks)
        events = await run(path)
        ((content, is_error),) = results(events)
        assert is_error and content == f"hook {sys.executable} hook.py {mode} {words}"
        assert last_message(events) == "went on"
    missing = {"command": str(tmp_path / "no-such-program")}
    path = write_flow(tmp_path, [sh("ls"), "went on"], hooks={"after_tool": [missing]})
    ((content, is_error),) = results(await run(path))
    assert is_error and "cannot start" in content


async def test_an_async_hook_is_awaited(tmp_path: Path) -> None:
    hooks = {"before_tool": [{"python": "guards:async_allow"}]}
    path = write_flow(tmp_path, [sh("ls"), "ok"], hooks=hooks)
    events = await run(path)
    assert results(events) == [("ran ls", False)]
    assert [h.decision for h in hooks_of(events)] == ["allow"]


async def test_a_replay_is_identical_and_runs_no_hook(tmp_path: Path) -> None:
    hooks = {
        "before_tool": [command("change"), {"python": "guards:no_rm"}],
        "after_tool": [{"python": "guards:shout"}, command("allow")],
    }
    agent = {"hooks": {"before_reply": [{"python": "guards:polite"}]}}
    replies = [sh("ls", "rm z"), sh("pwd"), {"echo": "last"}]
    path = write_flow(tmp_path, replies, hooks=hooks, agent=agent)
    events = await run(path)
    calls_file = tmp_path / "hook_calls.txt"
    ran = calls_file.read_text()
    assert len(hooks_of(events)) == 11  # 1 before_reply, 3 calls × 2 before, 2 × 2 after
    # Without the hooks' code, the replay still decides as the run did, from its log.
    (tmp_path / "guards.py").unlink()
    (tmp_path / "hook.py").unlink()
    report = await replay_run(None, events)
    assert report.identical, report.difference
    assert calls_file.read_text() == ran
    # A changed hook decision shows as a difference.
    edited = [
        e.model_copy(update={"content": "please, something else"})
        if isinstance(e, HookEvent) and e.stage == "before_reply"
        else e
        for e in events
    ]
    assert not (await replay_run(None, edited)).identical


BROKEN_HOOKS = """\
roost: 1
defaults: {provider: p}
providers: {p: {kind: scripted, replies: [ok]}}
hooks:
  before_tool:
    - python: "guards:no_rm"
    - command: ./not-here
agents:
  USER: {interrupt: ALWAYS}
  a:
    hooks:
      after_tool: [{python: "guards:shout_louder"}]
start: {from: USER, to: a}
"""


def test_validation_names_each_hook_that_cannot_run_where_it_is_written(tmp_path: Path) -> None:
    (tmp_path / "guards.py").write_text(GUARDS_PY)
    (tmp_path / "flow.yaml").write_text(BROKEN_HOOKS)
    expected = [
        "flow.yaml:7:7: error: hooks.before_tool[1]: command './not-here' not found",
        "flow.yaml:12:21: error: hooks.after_tool[0] of agent 'a': "
        "module 'guards' has no attribute 'shout_louder'",
    ]
    checked = run_cli("validate", "flow.yaml", cwd=tmp_path)
    assert (checked.returncode, checked.stdout.splitlines()) == (2, expected)
    ran = run_cli("run", "flow.yaml", cwd=tmp_path)
    assert (ran.returncode, ran.stderr.splitlines()) == (2, expected)


async def test_a_channel_member_is_shown_the_message_rewritten_and_others_as_written(
    tmp_path: Path,
) -> None:
    (tmp_path / "guards.py").write_text(GUARDS_PY)
    flow = {
        "roost": 1,
        "defaults": {"provider": "p"},
        "providers": {
            "p": {"kind": "scripted", "replies": [{"echo": "last"}], "when_exhausted": "cycle"}
        },
        "agents": {
            "USER": {"interrupt": "ALWAYS"},
            "a": {"hooks": {"before_reply": [{"python": "guards:polite"}]}},
            "b": {},
        },
        "channels": {
            "c": {"members": ["a", "b"], "max_rounds": 2, "director": {"strategy": "round_robin"}}
        },
        "start": {"from": "USER", "to": "c", "content": "sum it up"},
    }
    path = tmp_path / "flow.yaml"
    path.write_text(json.dumps(flow))
    events = await run(path)
    said = [e.content for e in events if isinstance(e, MessageEvent) and e.to == "c"]
    # a echoes its transcript, where USER's message reads as its hook rewrote it; b's
    # transcript shows USER's message as written (and a's reply as a said it).
    assert "@USER: please, sum it up" in said[1]
    assert "@USER: sum it up" in said[2]
    assert "@a: The conversation in c so far:\n@USER: please, sum it up" in said[2]


CHECKS_PY = """\
def boom(cmd: str) -> str:
    raise ValueError("the disk is full")

def report(call):
    result = call["result"]
    return {"decision": "change", "content": f"error={result['is_error']}: {result['content']}"}

def seen(call):
    return {"decision": "change", "content": "seen: " + call["content"]}
"""


def with_checks(path: Path) -> Path:
    """The flow at ``path`` with ``checks.py`` beside it and its tool ``boom``, which fails."""
    (path.parent / "checks.py").write_text(CHECKS_PY)
    flow = json.loads(path.read_text())
    flow["tools"]["boom"] = {"python": "checks:boom"}
    flow["agents"]["a"]["functions"].append("boom")
    path.write_text(json.dumps(flow))
    return path


async def test_an_after_tool_hook_is_told_whether_the_call_failed(tmp_path: Path) -> None:
    replies = [{"tool_calls": [{"name": "boom", "arguments": {"cmd": "x"}}]}, sh("ls"), "ok"]
    hooks = {"after_tool": [{"python": "checks:report"}]}
    events = await run(with_checks(write_flow(tmp_path, replies, hooks=hooks)))
    [(failed, failed_flag), (ran, ran_flag)] = results(events)
    assert failed.startswith("error=True: ") and "the disk is full" in failed and failed_flag
    assert (ran, ran_flag) == ("error=False: ran ls", False)


async def test_each_before_reply_hook_sees_the_message_as_the_one_before_left_it(
    tmp_path: Path,
) -> None:
    hooks = {"before_reply": [{"python": "guards:polite"}, {"python": "checks:seen"}]}
    path = with_checks(write_flow(tmp_path, [{"echo": "last"}], hooks=hooks, start="the file"))
    events = await run(path)
    assert last_message(events) == "seen: please, the file"


async def test_no_before_reply_hook_is_asked_after_one_refused_the_message(tmp_path: Path) -> None:
    hooks = {"before_reply": [{"python": "guards:no_spam"}, {"python": "guards:polite"}]}
    events = await run(write_flow(tmp_path, ["never said"], hooks=hooks, start="buy spam now"))
    assert [(h.hook, h.decision) for h in hooks_of(events)] == [("guards:no_spam", "refuse")]
    assert last_message(events) == "I do not answer spam."


async def test_a_replay_gives_each_message_the_decision_recorded_for_it(tmp_path: Path) -> None:
    """One before_reply hook allows the first message and refuses the second: a replay
    answers each from its own record, not both from the first."""
    hooks = {"before_reply": [{"python": "guards:no_spam"}]}
    path = write_flow(tmp_path, ["Hello to you.", "never said"], hooks=hooks, start="hello")
    log = MemoryLog("r")
    runner = Runner(flow=read_flow(path), log=log)
    await runner.start()
    await runner.continue_("buy spam now")
    events = log.load()
    assert [h.decision for h in hooks_of(events)] == ["allow", "refuse"]
    assert last_message(events) == "I do not answer spam."
    report = await replay_run(None, events)
    assert report.identical, report.difference
