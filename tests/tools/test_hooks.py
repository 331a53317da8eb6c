"""A hook asked on its own: what its answer decides, and a broken hook refusing in one line.

Hooks in a run (their events, the order they run in, replays) are tested with the
engine, in tests/engine/test_hooks.py.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest

from roost.flow.models import CommandHook, PythonHook
from roost.tools.hooks import Decision, FlowHook, HookFailed, decision_of

if TYPE_CHECKING:
    from pathlib import Path

CALL = {"name": "refund", "arguments": {"number": 42}}


def test_an_answer_states_a_decision_for_its_stage() -> None:
    assert decision_of("before_tool", None) == Decision()
    assert decision_of("before_tool", {"decision": "allow"}) == Decision()
    assert decision_of("after_tool", {"decision": "refuse"}) == Decision(
        "refuse", reason="refused by a hook"
    )
    changed = decision_of("before_tool", {"decision": "change", "arguments": {"number": 7}})
    assert changed == Decision("change", arguments={"number": 7})
    assert decision_of("before_reply", {"decision": "change", "content": "Hi"}) == Decision(
        "change", content="Hi"
    )


@pytest.mark.parametrize(
    ("stage", "answer", "said"),
    [
        ("before_tool", "allow", "it gave str, not an object with a decision"),
        ("before_tool", {"decision": "allow", "why": 1}, "unknown key 'why' in its decision"),
        ("before_tool", {"decision": "maybe"}, "unknown decision 'maybe': allow, refuse or change"),
        ("before_tool", {"decision": "refuse", "reason": 3}, "its reason is not a string"),
        ("after_tool", {"decision": "change", "arguments": {}},
         "a change at after_tool needs 'content', a string"),
        ("before_tool", {"decision": "change", "content": "x"},
         "a change at before_tool needs 'arguments', an object"),
    ],
)  # fmt: skip
def test_an_answer_that_decides_nothing_is_a_failed_hook(
    stage: str, answer: object, said: str
) -> None:
    with pytest.raises(HookFailed) as failed:
        decision_of(stage, answer)  # type: ignore[arg-type]
    assert str(failed.value) == said


async def test_a_command_reads_the_call_on_stdin_and_prints_its_decision(tmp_path: Path) -> None:
    script = (
        "import json, sys; call = json.load(sys.stdin); "
        "print(json.dumps({'decision': 'refuse', 'reason': 'no refund of ' "
        "+ str(call['arguments']['number'])}))"
    )
    hook = FlowHook(CommandHook(command=sys.executable, args=["-c", script]), tmp_path, str)
    assert await hook.decide("before_tool", CALL) == Decision("refuse", reason="no refund of 42")


async def test_a_hook_that_fails_refuses_in_one_masked_line(tmp_path: Path) -> None:
    script = "import sys; print('Traceback...\\nValueError: key sk-123', file=sys.stderr); exit(3)"
    config = CommandHook(command=sys.executable, args=["-c", script])
    hook = FlowHook(config, tmp_path, lambda text: text.replace("sk-123", "***"))
    decided = await hook.decide("before_tool", CALL)
    assert decided.decision == "refuse"
    assert decided.reason == f"hook {hook.name} failed: exit status 3: ValueError: key ***"


async def test_a_python_hook_past_its_timeout_refuses(tmp_path: Path) -> None:
    (tmp_path / "slow_hook.py").write_text(
        "import asyncio\n\n\nasync def wait(call):\n    await asyncio.sleep(30)\n"
    )
    hook = FlowHook(PythonHook(python="slow_hook:wait", timeout=0.2), tmp_path, str)
    assert await hook.decide("before_tool", CALL) == Decision(
        "refuse", reason="hook slow_hook:wait failed: timed out after 0.2 s"
    )
