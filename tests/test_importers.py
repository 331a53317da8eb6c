"""``roost import --from``: files written by AG2, AgentChat and OpenTelemetry become roost runs
that show, replay identical, fork and go on; ``roost export --to otel`` writes them back."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from roost.importers import import_run
from roost.importers.model import ImportFormatError
from tests.importers.conftest import FIXTURES, imported, roost

if TYPE_CHECKING:
    from pathlib import Path

CASES = [
    ("ag2_two.json", "ag2"),
    ("ag2_group.json", "ag2"),
    ("agentchat_tools.json", "agentchat"),
    ("agentchat_selector.json", "agentchat"),
    ("agentchat_state.json", "agentchat"),
    ("otel_ag2.json", "otel"),
]


@pytest.mark.parametrize(("name", "fmt"), CASES)
def test_each_file_imports_shows_and_replays_identical(tmp_path: Path, name: str, fmt: str) -> None:
    run_id = imported(tmp_path, name, fmt)
    shown = roost(tmp_path, "show", run_id)
    assert shown.returncode == 0 and "terminated" in shown.stdout
    replayed = roost(tmp_path, "replay", run_id)
    assert replayed.returncode == 0 and replayed.stdout.startswith("identical"), replayed.stdout


def test_a_fork_under_a_scripted_flow_goes_on(tmp_path: Path) -> None:
    run_id = imported(tmp_path, "ag2_group.json", "ag2")
    flow = (
        "roost: 1\nname: onwards\ndefaults: {provider: live, max_rounds: 20}\n"
        "providers:\n  live: {kind: scripted, replies: [critic, 'A new line. TERMINATE'],"
        " when_exhausted: repeat_last}\n"
        "agents: {writer: {}, critic: {}, editor: {}}\n"
        "channels:\n  chat:\n    members: [writer, critic, editor]\n    max_rounds: 20\n"
        "    director: {strategy: llm, provider: live, allow_repeat: true}\n"
    )
    (tmp_path / "onwards.yaml").write_text(flow)
    forked = roost(tmp_path, "fork", run_id, "--at", "6", "--flow", "onwards.yaml")
    assert forked.returncode == 0, forked.stderr
    assert "A new line. TERMINATE" in forked.stdout


def test_a_thousand_messages_import(tmp_path: Path) -> None:
    said = [{"content": f"line {n}", "role": "user", "name": "ab"[n % 2]} for n in range(1000)]
    (tmp_path / "long.json").write_text(json.dumps(said))
    _, events, _ = import_run(tmp_path / "long.json", "ag2", "r")
    assert sum(e.type == "message" for e in events) == 1000


BAD = [
    ("not json", "ag2", "not JSON"),
    ('{"a": 1}', "ag2", "expected a JSON list of AG2 messages"),
    ('[{"x": 1}]', "ag2", "not an AG2 message"),
    (
        '[{"content": "hi", "role": "user", "name": "a"}, {"role": "tool", "tool_responses": '
        '[{"tool_call_id": "nope", "content": "4"}]}]',
        "ag2",
        "tool result for 'nope' names no call",
    ),
    ("[1]", "agentchat", "expected a TaskResult"),
    ('{"messages": [{"type": "Weird", "source": "a"}]}', "agentchat", "unknown message type"),
    ('{"spans": []}', "otel", "no 'resourceSpans'"),
    ('{"resourceSpans": []}', "otel", "no GenAI chat spans"),
    ("[]", "yaml", "--from 'yaml': use one of"),
    ('[{"content": "alone", "role": "user", "name": "a"}]', "ag2", "fewer than two speakers"),
]


@pytest.mark.parametrize(("text", "fmt", "said"), BAD)
def test_bad_input_is_one_line_exit_2_and_nothing_stored(
    tmp_path: Path, text: str, fmt: str, said: str
) -> None:
    (tmp_path / "bad.json").write_text(text)
    done = roost(tmp_path, "import", "bad.json", "--from", fmt)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert "no runs stored" in roost(tmp_path, "runs").stdout


def test_a_file_over_200_mb_is_refused_by_its_size(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as out:
        out.truncate(200 * 1024 * 1024 + 1)  # sparse: nothing is written, nothing read
    with pytest.raises(ImportFormatError, match="over the 200 MB"):
        import_run(big, "ag2", "r")


def test_thread_belongs_to_langgraph(tmp_path: Path) -> None:
    done = roost(
        tmp_path, "import", str(FIXTURES / "ag2_two.json"), "--from", "ag2", "--thread", "t1"
    )
    assert done.returncode == 2 and "--thread picks a LangGraph thread" in done.stderr


def test_export_to_another_format_is_refused(tmp_path: Path) -> None:
    run_id = imported(tmp_path, "ag2_two.json", "ag2")
    done = roost(tmp_path, "export", run_id, "--to", "yaml")
    assert done.returncode == 2 and "--to 'yaml'" in done.stderr
