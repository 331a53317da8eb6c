"""``roost run`` keeps memory in the store; ``roost memory`` lists, searches, adds and forgets."""

from __future__ import annotations

from tests.fakes.flows import ASK_TEA as ASK
from tests.fakes.flows import TELL_TEA as TELL


def test_a_preference_told_in_one_run_is_recalled_by_another_flow(roost, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "tell.yaml").write_text(TELL)
    (tmp_path / "ask.yaml").write_text(ASK)
    assert roost("run", "tell.yaml").code == 0
    asked = roost("run", "ask.yaml", "--no-input")
    assert "- tea: The guest drinks green tea." in asked.out
    listed = roost("memory", "list")
    assert "shared:guests" in listed.out and "green tea" in listed.out


def test_memory_commands_add_search_and_forget(roost) -> None:  # type: ignore[no-untyped-def]
    scope = ("--scope", "shared:guests")
    assert roost("memory", "add", "city", "Lives in Lyon", *scope, "--importance", "0.3").code == 0
    found = roost("memory", "search", 'city" OR NEAR(*', *scope)
    assert found.code == 0 and "Lives in Lyon" in found.out
    assert roost("memory", "forget", "city", *scope).code == 0
    again = roost("memory", "forget", "city", *scope)
    assert again.code == 2 and "has no entry 'city'" in again.err
    assert "Lyon" not in roost("memory", "list", *scope).out


def test_memory_commands_say_what_is_missing(roost) -> None:  # type: ignore[no-untyped-def]
    missing = roost("memory", "add", "k", "v")
    assert missing.code == 2 and "needs --scope" in missing.err
    assert "Traceback" not in missing.err
    wrong = roost("memory", "add", "only-a-key", "--scope", "shared:s")
    assert wrong.code == 2 and "usage: roost memory add KEY CONTENT" in wrong.err


def test_memory_list_takes_a_flow_and_says_when_a_scope_is_written_wrong(roost, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "tell.yaml").write_text(TELL)
    (tmp_path / "other.yaml").write_text(ASK.replace("scope: guests", "scope: flow"))
    assert roost("run", "tell.yaml").code == 0
    assert roost("memory", "add", "k", "elsewhere", "--scope", "flow:tea-order").code == 0
    listed = roost("memory", "list", "tell.yaml")
    assert listed.code == 0, listed.err
    assert "green tea" in listed.out and "elsewhere" not in listed.out
    by_name = roost("memory", "list", "tea-order")
    assert "elsewhere" in by_name.out and "green tea" not in by_name.out
    for wrong in ("guests", "flow:", "agent:tea-order"):
        said = roost("memory", "list", "--scope", wrong)
        assert said.code == 2, said.out
        assert f"--scope {wrong!r} is not a scope: write flow:FLOW" in said.err
        assert "Traceback" not in said.err
    assert "shared:guests" in roost("memory", "list", "--scope", "shared:guests").out


def test_chat_memory_shows_what_the_flow_remembers(roost, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "tell.yaml").write_text(TELL)
    (tmp_path / "ask.yaml").write_text(ASK)
    before = roost("chat", "ask.yaml", stdin="/memory\n/quit\n")
    assert "nothing is remembered yet" in before.out
    assert roost("run", "tell.yaml").code == 0
    after = roost("chat", "ask.yaml", stdin="/memory\n/quit\n")
    assert "shared:guests: tea (0.9): The guest drinks green tea." in after.out


def test_a_postgresql_store_remembers_across_runs_and_commands(  # type: ignore[no-untyped-def]
    roost,
    tmp_path,
    pg_url,
    monkeypatch,
) -> None:
    monkeypatch.setenv("ROOST_DB", pg_url)
    (tmp_path / "tell.yaml").write_text(TELL)
    (tmp_path / "ask.yaml").write_text(ASK)
    assert roost("run", "tell.yaml").code == 0
    assert "- tea: The guest drinks green tea." in roost("run", "ask.yaml", "--no-input").out
    scope = ("--scope", "shared:guests")
    assert roost("memory", "add", "city", "Lives in Lyon", *scope).code == 0
    assert "Lives in Lyon" in roost("memory", "search", 'lyon" OR -', *scope).out
    assert roost("memory", "forget", "tea", *scope).code == 0
    assert roost("memory", "list").out.count("shared:guests") == 1
    assert not (tmp_path / ".roost").exists()  # nothing went to a SQLite file


def test_entries_over_the_limits_or_holding_nul_are_refused_in_one_line(roost) -> None:  # type: ignore[no-untyped-def]
    scope = ("--scope", "shared:guests")
    for key, content in (("k" * 201, "v"), ("k", "v" * 4001), ("k\x00", "v"), ("k", "")):
        refused = roost("memory", "add", key, content, *scope)
        assert refused.code == 2 and refused.err.count("\n") == 1, refused.err
    listed = roost("memory", "list", *scope)
    assert "Traceback" not in listed.err and "k" not in listed.out.splitlines()[1:]


def test_chat_memory_in_a_fork_shows_the_memory_of_its_fork_point(roost, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "tell.yaml").write_text(TELL)
    (tmp_path / "ask.yaml").write_text(ASK)
    asked = roost("run", "ask.yaml", "--no-input")
    first = asked.out.split()[1]
    assert roost("run", "tell.yaml").code == 0  # tea is remembered after the ask began
    forked = roost("fork", first, "--at", "2", "--no-input")
    assert forked.code == 0, forked.err
    fork_id = forked.out.split()[1].rstrip(":")
    shown = roost("chat", "ask.yaml", stdin=f"/switch {fork_id}\n/memory\n/quit\n")
    assert "nothing is remembered yet" in shown.out and "green tea" not in shown.out
