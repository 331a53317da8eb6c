"""A replay that diverges at a model call shows how the two requests differ."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from roost.cli.request_diff import request_lines
from roost.messages import (
    AssistantMessage,
    ModelRequest,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)

if TYPE_CHECKING:
    from pathlib import Path


FLOW = """\
roost: 1
name: chat
defaults: {provider: mock, max_rounds: 2}
providers:
  mock:
    kind: scripted
    replies: ["one", "two", "three"]
agents:
  writer: {role: "You write.\\nBe calm."}
  critic: {role: You criticise.}
start: {from: critic, to: writer, content: Write a poem}
"""


def recorded_run(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "chat.yaml").write_text(FLOW)
    assert roost("run", "chat.yaml", "--events", "run.jsonl").code == 0


def test_an_edited_role_shows_as_a_diff_of_the_system_prompt(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recorded_run(roost, tmp_path)
    (tmp_path / "edited.yaml").write_text(FLOW.replace("Be calm.", "Be angry."))
    result = roost("replay", "run.jsonl", "--flow", "edited.yaml")
    assert result.code == 4
    lines = result.out.splitlines()
    start = lines.index("the request of writer's model call (event 2) differs:")
    assert lines[start + 1 : start + 9] == [
        "--- recorded (the run's own flow)",
        "+++ replayed (edited.yaml)",
        "@@ -1,5 +1,5 @@",
        " system:",
        "   You write.",
        "-  Be calm.",
        "+  Be angry.",
        " tools: (none)",
    ]
    # ...and then the field table, as before.
    assert any("request_digest" in line for line in lines[start + 9 :])


def test_messages_that_differ_show_in_the_diff(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recorded_run(roost, tmp_path)
    # A context file changes what the writer is shown, not its system prompt.
    (tmp_path / "notes.md").write_text("Rhymes please.")
    noted = FLOW.replace('Be calm."}', 'Be calm.", context: [notes.md]}')
    (tmp_path / "noted.yaml").write_text(noted)
    lines = roost("replay", "run.jsonl", "--flow", "noted.yaml").out.splitlines()
    start = lines.index(" messages:")
    assert lines[start : start + 2] == [" messages:", "   [user] Write a poem"]
    added = [line for line in lines[start + 2 :] if line.startswith("+")]
    assert "+         ### notes.md" in added and "+         Rhymes please." in added


def test_a_difference_from_outside_the_flow_is_said_so(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recorded_run(roost, tmp_path)
    path = tmp_path / "run.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    for event in events:  # the digest no longer matches what the flow builds
        if event["type"] == "llm_call":
            event["request_digest"] = "sha256:" + "0" * 64
            break
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    result = roost("replay", "run.jsonl")
    assert result.code == 4
    assert "the difference comes from outside the flow" in result.out


def test_request_lines_show_every_part_of_a_request() -> None:
    request = ModelRequest(
        system="Be brief.",
        tools=(ToolSpec(name="add"), ToolSpec(name="mul")),
        messages=(
            UserMessage(content="two\nlines"),
            AssistantMessage(
                content="", tool_calls=(ToolCall(id="1", name="add", arguments={"a": 1}),)
            ),
            ToolResultMessage(tool_call_id="1", name="add", content="2", is_error=True),
        ),
    )
    assert request_lines(request) == [
        "system:",
        "  Be brief.",
        "tools: add, mul",
        "messages:",
        "  [user] two",
        "         lines",
        '  [assistant] calls add({"a": 1})',
        "  [tool add (error)] 2",
    ]
