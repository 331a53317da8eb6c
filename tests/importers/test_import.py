"""``roost import --from``: files written by AG2, AgentChat and OpenTelemetry become roost runs
that show, replay identical, fork and go on; ``roost export --to otel`` writes them back."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from roost.importers import import_run
from roost.importers.model import ImportFormatError
from tests.importers.conftest import FIXTURES, events_of, messages, roost

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


def imported(tmp_path: Path, name: str, fmt: str) -> str:
    done = roost(tmp_path, "import", str(FIXTURES / name), "--from", fmt)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[2]


@pytest.mark.parametrize(("name", "fmt"), CASES)
def test_each_file_imports_shows_and_replays_identical(tmp_path: Path, name: str, fmt: str) -> None:
    run_id = imported(tmp_path, name, fmt)
    shown = roost(tmp_path, "show", run_id)
    assert shown.returncode == 0 and "terminated" in shown.stdout
    replayed = roost(tmp_path, "replay", run_id)
    assert replayed.returncode == 0 and replayed.stdout.startswith("identical"), replayed.stdout


def test_a_two_agent_chat_keeps_its_tool_calls_paired_and_the_failing_one_an_error() -> None:
    events = events_of("ag2_two.json", "ag2")
    assert messages(events) == [
        ("user_proxy", "maths_bot", "How much is 2 + 2, and 1 / 0?"),
        ("maths_bot", "user_proxy", "2 + 2 = 4, and 1 / 0 has no value. TERMINATE"),
    ]
    results = [(e["id"], e["content"], e["is_error"]) for e in events if e["type"] == "tool_result"]
    assert results == [("call_1", "4", False), ("call_2", "Error: division by zero", True)]
    calls = [e["id"] for e in events if e["type"] == "tool_call"]
    assert calls == ["call_1", "call_2"]
    start = events[0]
    assert start["imported"]["format"] == "ag2" and start["imported"]["file"] == "ag2_two.json"
    assert "maths-bot in the imported run" in start["flow"]["text"]  # the original name kept


def test_a_group_chat_goes_through_a_channel_whose_choices_are_recorded() -> None:
    events = events_of("agentchat_selector.json", "agentchat")
    chosen = [e["chosen"] for e in events if e["type"] == "select"]
    assert chosen == ["writer", "critic", "editor"]
    assert {e["to"] for e in events if e["type"] == "message"} == {"chat"}
    usage = [
        e["usage"]["prompt_tokens"]
        for e in events
        if e["type"] == "llm_call" and e["provider"] == "recorded"
    ]
    assert usage == [9, 19, 26]
    said = [e["ts"] for e in events if e["type"] == "message"]
    assert said[0] == "2026-12-02T13:41:24.242526Z" and said == sorted(said)
    assert said[-1] == "2026-12-02T13:41:24.334579Z"


def test_a_persons_answer_is_a_resume_and_tools_recorded_by_agentchat_pair() -> None:
    events = events_of("agentchat_tools.json", "agentchat")
    resumes = [e["feedback"] for e in events if e["type"] == "resume"]
    assert resumes == ["No, thank you."]
    assert [e["type"] for e in events].count("interrupt") == 1
    failing = [e for e in events if e["type"] == "tool_result" and e["is_error"]]
    assert [e["content"] for e in failing] == ["division by zero"]
    assert "interrupt: ALWAYS" in events[0]["flow"]["text"]


def test_a_save_state_gives_the_same_conversation_as_the_task_result() -> None:
    state = messages(events_of("agentchat_state.json", "agentchat"))
    assert state == messages(events_of("agentchat_selector.json", "agentchat"))


def test_otel_spans_of_another_engine_give_speakers_roles_and_models() -> None:
    events = events_of("otel_ag2.json", "otel")
    assert [m[0] for m in messages(events)] == ["user", "guide", "user", "guide"]
    assert "You answer briefly." in events[0]["flow"]["text"]
    models = {e["model"] for e in events if e["type"] == "llm_call" and e["node"] == "guide"}
    assert models == {"list-model"}


def test_export_to_otel_and_back_gives_the_same_conversation(tmp_path: Path) -> None:
    run_id = imported(tmp_path, "agentchat_tools.json", "agentchat")
    exported = roost(tmp_path, "export", run_id, "--to", "otel")
    assert exported.returncode == 0
    document = json.loads(exported.stdout)
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert any(s["name"].startswith("chat") for s in spans)
    (tmp_path / "spans.json").write_text(exported.stdout)
    back = messages(events_of_path(tmp_path / "spans.json", "otel"))
    assert back == messages(events_of("agentchat_tools.json", "agentchat"))


def events_of_path(path: Path, fmt: str) -> list[dict]:
    _, events, _ = import_run(path, fmt, "r")
    return [e.model_dump(by_alias=True, mode="json") for e in events]


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


def test_speaker_names_are_made_valid_and_unique() -> None:
    from roost.importers.derive import node_names

    names = node_names(["maths-bot", "maths bot", "7up", "chat", ""])
    assert names == {
        "maths-bot": "maths_bot",
        "maths bot": "maths_bot_2",
        "7up": "a_7up",
        "chat": "chat_2",
        "": "speaker",
    }


def test_export_to_another_format_is_refused(tmp_path: Path) -> None:
    run_id = imported(tmp_path, "ag2_two.json", "ag2")
    done = roost(tmp_path, "export", run_id, "--to", "yaml")
    assert done.returncode == 2 and "--to 'yaml'" in done.stderr


HOSTILE = [
    "Hi {{ 6*7 }} {% include 'secret.txt' %} {# a comment #}",
    "{% raw %}x{% endraw %} then {%- endraw -%} and {{ 'endraw' }}",
    "${ROOST_IMPORT_SECRET} and $${ROOST_IMPORT_SECRET} and ${ROOST_IMPORT_SECRET:-d}",
    "{%\n endraw\n%}{{\n",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_recorded_text_is_data_never_a_template_or_a_placeholder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    from roost.flow.loader import load_flow_text
    from roost.nodes.roles import render

    monkeypatch.setenv("ROOST_IMPORT_SECRET", "s3cret-value")
    said = [
        {"role": "system", "name": "bot", "content": f"Role: {text}"},
        {"role": "user", "name": "user", "content": text},
        {"role": "assistant", "name": "bot", "content": f"Reply: {text}"},
    ]
    (tmp_path / "hostile.json").write_text(json.dumps(said))
    flow_text, events, _ = import_run(tmp_path / "hostile.json", "ag2", "r")
    dumped = [e.model_dump(by_alias=True, mode="json") for e in events]
    assert [m[2] for m in messages(dumped)] == [text, f"Reply: {text}"]
    assert "s3cret-value" not in json.dumps(dumped)
    flow = load_flow_text(flow_text, "hostile.yaml")
    role = flow.agents["bot"].role
    assert role is not None and render(role) == f"Role: {text}"
