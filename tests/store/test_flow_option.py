"""``--flow FILE`` on continue, retry and fork: rescuing a run whose flow was wrong."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from tests.store.conftest import Result


# The writer's role fails as a template until it is fixed; the scripted replies echo
# the system prompt, so each reply shows which role the writer was given.
BROKEN = """\
roost: 1
name: chat
defaults: {provider: mock, max_rounds: 3}
providers:
  mock:
    kind: scripted
    replies: [{echo: system}, "INTERRUPT", {echo: system}, "ok", {echo: system}, "ok"]
agents:
  writer: {role: "You write. {{ 1 // 0 }}"}
  critic: {role: You criticise.}
start: {from: critic, to: writer, content: Write a poem}
"""
FIXED = BROKEN.replace("{{ 1 // 0 }}", "Be brief.")


def run_id(result: Result) -> str:
    return result.out.split()[1]


def exported(roost, ref: str) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    out = roost("export", ref).out
    return [json.loads(line) for line in out.splitlines()]


def writer_said(roost, ref: str) -> list[str]:  # type: ignore[no-untyped-def]
    events = exported(roost, ref)
    return [str(e["content"]) for e in events if e["type"] == "message" and e["from"] == "writer"]


def test_the_retry_hint_after_a_flow_error_names_flow(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "broken.yaml").write_text(BROKEN)
    started = roost("run", "broken.yaml")
    assert started.code == 3
    hint = started.err.splitlines()[-1]
    assert hint.startswith(f"retry with: roost retry {run_id(started)} --flow broken.yaml (fix ")
    # A model that failed is worth retrying as it is: that hint names no --flow.
    failing = BROKEN.replace("{{ 1 // 0 }}", "").replace("[{echo: system},", "[{error: down},")
    (tmp_path / "failing.yaml").write_text(failing)
    down = roost("run", "failing.yaml")
    assert down.code == 3 and "--flow" not in down.err
    assert down.err.splitlines()[-1] == f"retry with: roost retry {run_id(down)}"
    assert "--flow" in roost("show", run_id(started)).out
    assert "--flow" not in roost("show", run_id(down)).out


def test_retry_with_the_fixed_flow_rescues_the_run(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "chat.yaml").write_text(BROKEN)
    run = run_id(roost("run", "chat.yaml"))
    (tmp_path / "chat.yaml").write_text(FIXED)
    # Without --flow the run keeps its recorded flow, and says that the file changed.
    again = roost("retry", run)
    assert again.code == 3
    note = again.err.splitlines()[0]
    assert note.startswith("roost: note: chat.yaml has changed since run")
    assert note.endswith("add --flow chat.yaml)")
    rescued = roost("retry", run, "--flow", "chat.yaml")
    assert rescued.code == 0, rescued.err
    assert "note" not in rescued.err
    assert writer_said(roost, run)[0] == "You write. Be brief."
    events = exported(roost, run)
    change = [e for e in events if e["type"] == "flow"]
    assert len(change) == 1
    assert change[0]["flow"]["text"] == FIXED  # type: ignore[index]
    assert events[int(change[0]["seq"]) + 1]["type"] == "retry"  # type: ignore[call-overload]
    shown = roost("show", run).out
    assert f"{change[0]['seq']} ⇄ from here the run follows chat.yaml (chat, sha256:" in shown
    assert roost("replay", run).out.startswith("identical")
    # Now the file is the flow in force: no note any more.
    assert "note" not in roost("show", run).err


def test_continue_with_an_edited_role_uses_it(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    flow = FIXED.replace('[{echo: system}, "INTERRUPT",', '["INTERRUPT",')
    (tmp_path / "chat.yaml").write_text(flow)
    run = run_id(roost("run", "chat.yaml", "--no-input"))
    edited = flow.replace("Be brief.", "Be kind.")
    (tmp_path / "kind.yaml").write_text(edited)
    went_on = roost("continue", run, "--answer", "more", "--flow", "kind.yaml")
    assert went_on.code == 0, went_on.err
    assert writer_said(roost, run)[1] == "You write. Be kind."


def test_a_flow_file_that_does_not_validate_is_refused(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "chat.yaml").write_text(BROKEN)
    run = run_id(roost("run", "chat.yaml"))
    before = exported(roost, run)
    (tmp_path / "bad.yaml").write_text(FIXED.replace("max_rounds: 3", "max_rounds: lots"))
    for verb in ("retry", "continue"):
        extra = ["--answer", "x"] if verb == "continue" else []
        refused = roost(verb, run, *extra, "--flow", "bad.yaml")
        assert refused.code == 2
        assert len(refused.err.splitlines()) == 1
        assert refused.err.startswith("bad.yaml:3:")
    assert exported(roost, run) == before


def test_a_flow_that_drops_a_node_the_run_used_is_refused(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "chat.yaml").write_text(BROKEN)
    run = run_id(roost("run", "chat.yaml"))
    before = exported(roost, run)
    dropped = FIXED.replace("critic", "editor")
    (tmp_path / "dropped.yaml").write_text(dropped)
    refused = roost("retry", run, "--flow", "dropped.yaml")
    assert refused.code == 2
    assert refused.err.splitlines() == [
        "dropped.yaml:8:1: error: the run's history names 'critic' (event 1), which this flow "
        "does not have: a flow that takes over a run must keep every node the run has used"
    ]
    assert exported(roost, run) == before
    missing = roost("retry", run, "--flow", "nowhere.yaml")
    assert missing.code == 2 and len(missing.err.splitlines()) == 1


def test_a_run_file_goes_on_under_the_fixed_flow(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "chat.yaml").write_text(BROKEN)
    roost("run", "chat.yaml", "--events", "run.jsonl")
    (tmp_path / "fixed.yaml").write_text(FIXED)
    assert roost("retry", "run.jsonl", "--flow", "fixed.yaml").code == 0
    lines = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert [e["flow"]["path"] for e in lines if e["type"] == "flow"] == ["fixed.yaml"]
    assert roost("replay", "run.jsonl").out.startswith("identical")


def test_fork_takes_a_flow_too(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "chat.yaml").write_text(BROKEN)
    run = run_id(roost("run", "chat.yaml"))
    before = exported(roost, run)
    (tmp_path / "fixed.yaml").write_text(FIXED)
    forked = roost("fork", run, "--at", "3", "--flow", "fixed.yaml")  # at the error
    assert forked.code == 0, forked.err
    fork_id = forked.out.split()[1].rstrip(":")
    events = exported(roost, fork_id)
    assert [e["type"] for e in events[:5]] == ["run_start", "message", "error", "flow", "retry"]
    assert writer_said(roost, fork_id)[0] == "You write. Be brief."
    assert exported(roost, run) == before  # the parent is left as it was
    assert roost("replay", fork_id).out.startswith("identical")
    (tmp_path / "dropped.yaml").write_text(FIXED.replace("critic", "editor"))
    refused = roost("fork", run, "--at", "3", "--flow", "dropped.yaml")
    assert refused.code == 2 and refused.err.startswith("dropped.yaml:8:1: error:")
    assert len(roost("runs").out.splitlines()) == 3  # the parent and one fork, no other


def test_a_fork_at_1_starts_again_under_the_new_flow(roost, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "chat.yaml").write_text(BROKEN)
    run = run_id(roost("run", "chat.yaml"))
    (tmp_path / "fixed.yaml").write_text(FIXED)
    forked = roost("fork", run, "--at", "1", "--message", "Again", "--flow", "fixed.yaml")
    assert forked.code == 0, forked.err
    fork_id = forked.out.split()[1].rstrip(":")
    events = exported(roost, fork_id)
    assert [e["type"] for e in events[:3]] == ["run_start", "flow", "message"]
    assert roost("replay", fork_id).out.startswith("identical")
