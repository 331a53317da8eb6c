"""The store commands end to end: run, list, show, replay, fork, export, import, chat."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.store.conftest import CHAT, finished_run

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_show_prints_the_transcript_and_how_to_go_on(roost) -> None:  # type: ignore[no-untyped-def]
    started = roost("run", "chat.yaml", "--no-input")
    run_id = started.out.split()[1]
    shown = roost("show", run_id[:-3]).out
    assert "critic → writer: Write a poem" in shown
    assert "⏸ writer waits for critic" in shown
    assert f"roost continue {run_id} --answer TEXT" in shown
    roost("continue", run_id, "--answer", "shorter please")
    shown = roost("show", run_id).out
    assert "✗ error critic → writer: provider 'mock': boom" in shown
    assert f"roost retry {run_id}" in shown


def test_replay_of_a_stored_run_is_identical(roost) -> None:  # type: ignore[no-untyped-def]
    run_id = finished_run(roost)
    replayed = roost("replay", run_id)
    assert replayed.code == 0 and "identical: 21 events" in replayed.out


def test_replay_with_an_edited_flow_exits_4_and_shows_both(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run_id = finished_run(roost)
    (tmp_path / "edited.yaml").write_text(CHAT.replace("You write.", "You write well."))
    replayed = roost("replay", run_id, "--flow", "edited.yaml")
    assert replayed.code == 4
    assert "diverged at event 2" in replayed.out
    assert "request_digest" in replayed.out and "recorded" in replayed.out
    assert roost("replay", run_id, "--flow", "edited.yaml", "--until", "1").code == 0


def test_replay_until_past_the_end_is_an_error(roost) -> None:  # type: ignore[no-untyped-def]
    run_id = finished_run(roost)
    result = roost("replay", run_id, "--until", "21")
    assert result.code == 2 and "events 0 to 20" in result.err


def test_fork_at_an_interrupt_answers_it_differently(roost) -> None:  # type: ignore[no-untyped-def]
    run_id = finished_run(roost)
    forked = roost("fork", run_id, "--at", "9", "--message", "make it longer", "--no-input")
    assert "critic → writer: make it longer" in forked.out
    fork_id = forked.out.split()[1].rstrip(":")
    events = [json.loads(line) for line in roost("export", fork_id).out.splitlines()]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert {e["run"] for e in events} == {fork_id}
    assert events[0]["parent"] == run_id and events[0]["fork_at"] == 9
    assert events[10]["content"] == "make it longer"
    assert "family:" in roost("show", run_id).out and fork_id in roost("show", run_id).out
    assert "identical" in roost("replay", fork_id).out


def test_fork_mid_step_goes_on_live(roost) -> None:  # type: ignore[no-untyped-def]
    run_id = finished_run(roost)
    forked = roost("fork", run_id, "--at", "4", "--no-input")
    assert forked.code == 0 and "writer waits for critic" in forked.out
    fork_id = forked.out.split()[1].rstrip(":")
    assert roost("replay", fork_id).code == 0  # the stop at the fork point is replayed too


def test_fork_refuses_bad_points(roost) -> None:  # type: ignore[no-untyped-def]
    run_id = finished_run(roost)
    past = roost("fork", run_id, "--at", "99")
    assert past.code == 2 and "cannot fork at 99" in past.err
    ended = roost("fork", run_id, "--at", "21")
    assert ended.code == 2 and "terminated" in ended.err
    missing = roost("fork", "nope", "--at", "2")
    assert missing.code == 2 and "no run 'nope'" in missing.err
    listed = roost("runs").out
    assert listed.count("chat") == 1  # nothing was stored by the refused forks


def test_export_then_import_into_another_store(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run_id = finished_run(roost)
    exported = roost("export", run_id).out
    (tmp_path / "run.jsonl").write_text(exported)
    imported = roost("import", "run.jsonl", "--db", "other.db")
    assert imported.code == 0 and f"imported run {run_id} (21 events)" in imported.out
    assert roost("export", run_id, "--db", "other.db").out == exported
    again = roost("import", "run.jsonl", "--db", "other.db")
    assert again.code == 2 and "already in the store" in again.err
    assert roost("replay", "run.jsonl").code == 0


def test_import_refuses_a_torn_file(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run_id = finished_run(roost)
    (tmp_path / "torn.jsonl").write_text(roost("export", run_id).out[:-40])
    result = roost("import", "torn.jsonl", "--db", "other.db")
    assert result.code == 2 and "torn.jsonl:21" in result.err and "nothing imported" in result.err
    assert (
        not (tmp_path / "other.db").exists() or "no runs" in roost("runs", "--db", "other.db").out
    )


def test_bad_databases_are_one_line(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "junk.db").write_bytes(b"not sqlite" * 500)
    junk = roost("runs", "--db", "junk.db")
    assert junk.code == 1 and junk.err.count("\n") == 1 and "not a roost database" in junk.err
    unreachable = roost("runs", "--db", "postgresql://roost:pw@127.0.0.1:1/x")
    assert unreachable.code == 1 and "pw" not in unreachable.err
    assert "Traceback" not in unreachable.err


def test_an_env_var_names_the_store(roost, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ROOST_DB", str(tmp_path / "env.db"))
    finished_run(roost)
    assert (tmp_path / "env.db").exists() and not (tmp_path / ".roost" / "roost.db").exists()


def test_chat_continues_one_run_line_by_line(roost) -> None:  # type: ignore[no-untyped-def]
    lines = "hello there\nagain\n/retry\n/rename my poem\n/runs\n/show\n/nope\n/quit\n"
    chatted = roost("chat", "chat.yaml", stdin=lines)
    assert chatted.code == 0
    assert "critic → writer: hello there" in chatted.out
    assert "critic → writer: again" in chatted.out
    assert "my poem" in chatted.out and "no command /nope" in chatted.out
    listed = roost("runs").out
    assert "terminated" in listed and "my poem" in listed


def test_chat_forks_and_switches(roost) -> None:  # type: ignore[no-untyped-def]
    run_id = finished_run(roost)
    lines = f"/switch {run_id}\n/fork 9\nother answer\n/new\n/help\n"
    chatted = roost("chat", "chat.yaml", stdin=lines)
    assert f"run {run_id} of chat (terminated)" in chatted.out
    assert "critic → writer: other answer" in chatted.out
    assert "/fork SEQ" in chatted.out
    assert roost("runs").out.count("chat") == 2  # /new stores nothing until a message


def test_the_commands_work_on_postgresql(roost, pg_url: str) -> None:  # type: ignore[no-untyped-def]
    started = roost("run", "chat.yaml", "--answer", "shorter please", "--db", pg_url)
    run_id = started.out.split()[1]
    assert roost("retry", run_id, "--db", pg_url).code == 0
    assert "terminated" in roost("runs", "--db", pg_url).out
    assert "■ terminated" in roost("show", run_id, "--db", pg_url).out
    assert roost("replay", run_id, "--db", pg_url).code == 0
    forked = roost("fork", run_id, "--at", "9", "--answer", "again", "--db", pg_url)
    assert forked.code == 3  # the scripted provider's error comes back in the fork
    assert len(roost("export", run_id, "--db", pg_url).out.splitlines()) == 21


def test_fork_at_1_starts_again_with_a_new_message(roost) -> None:  # type: ignore[no-untyped-def]
    run_id = finished_run(roost)
    forked = roost("fork", run_id, "--at", "1", "--message", "Write a limerick", "--no-input")
    assert forked.code == 0 and "critic → writer: Write a limerick" in forked.out
    fork_id = forked.out.split()[1].rstrip(":")
    assert "writer waits for critic" in forked.out
    assert roost("replay", fork_id).code == 0
    wrong = roost("fork", run_id, "--at", "4", "--message", "no", "--no-input")
    assert wrong.code == 2 and "--message needs a fork point" in wrong.err
