"""A model call's ``request_digest`` covers the request as sent, and old runs still replay.

A replay compares digests to see whether a request changed. The digest used to
cover the system prompt, the tool names and the entries shown, but not how
they were shown: toggling ``defaults.timestamps`` (which starts each user
message with its time), the member a channel transcript is written for, or the
provider's settings changed the request and the replay said ``identical``.
Runs recorded before (``old_runs/``, made by that roost) must still replay
``identical``: their calls are digested the old way.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from roost import load_flow
from roost.cli import main
from roost.engine import Runner, fold
from roost.engine.digests import FULL_FORM, is_legacy_digest, request_digest
from roost.engine.replay import replay_run
from roost.events import Event, LlmCallEvent
from roost.flow import load_flow_text
from roost.nodes.agent import seen_by
from roost.ports import MemoryLog
from roost.store.jsonl import JsonlLog

OLD_RUNS = Path(__file__).parent / "old_runs"

CHANNEL = """\
roost: 1
name: digest
defaults: {provider: team}
providers:
  team: {kind: scripted, replies: [one, two, three, TERMINATE]}
  director: {kind: scripted, replies: [solver, checker, solver]}
agents:
  client: {role: The client.}
  solver: {role: You answer.}
  checker: {role: You answer.}
channels:
  team:
    members: [solver, checker]
    max_rounds: 4
    role: You direct.
    director: {strategy: llm, provider: director}
start: {from: client, to: team, content: "How much is 2 + 2?"}
"""


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        main(args)
    except SystemExit as exited:
        code = int(exited.code or 0)
    else:
        code = 0
    return code, capsys.readouterr().out


def record(tmp_path: Path, text: str = CHANNEL) -> tuple[Path, list[Event]]:
    """A run of ``text`` written to ``run.jsonl``, and its events."""
    path = tmp_path / "flow.yaml"
    path.write_text(text)
    log = JsonlLog(tmp_path / "run.jsonl", "run-1")
    asyncio.run(Runner(flow=load_flow(path), log=log).start())
    return tmp_path / "run.jsonl", log.load()


def replay_with(tmp_path: Path, events: list[Event], edited: str) -> bool:
    """Whether ``events`` replay identical under the flow ``edited``."""
    path = tmp_path / "edited.yaml"
    path.write_text(edited)
    return asyncio.run(replay_run(load_flow(path), events)).identical


@pytest.mark.parametrize("name", ["pair", "channel"])
def test_a_run_recorded_before_replays_identical(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(OLD_RUNS, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)  # the run names its flow (and notes.md) relative to here
    run_file = tmp_path / f"{name}.jsonl"
    calls = [e for e in JsonlLog(run_file).load() if isinstance(e, LlmCallEvent)]
    assert calls and all(is_legacy_digest(call.request_digest) for call in calls)
    code, out = run_main(["replay", str(run_file)], capsys)
    assert (code, out.split(":")[0]) == (0, "identical")


def test_a_new_run_records_the_full_form_and_replays_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file, events = record(tmp_path)
    digests = [e.request_digest for e in events if isinstance(e, LlmCallEvent)]
    assert all(digest.startswith(FULL_FORM) for digest in digests)
    assert len(set(digests)) == len(digests)
    code, out = run_main(["replay", str(run_file)], capsys)
    assert (code, out.split(":")[0]) == (0, "identical")


def test_showing_times_changes_the_request_and_the_replay_diverges(tmp_path: Path) -> None:
    _, events = record(tmp_path)
    stamped = CHANNEL.replace("{provider: team}", "{provider: team, timestamps: true}")
    assert not replay_with(tmp_path, events, stamped)
    assert replay_with(tmp_path, events, CHANNEL)


def test_showing_times_between_two_agents_diverges_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(OLD_RUNS, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    code, _ = run_main(["run", "pair.yaml", "--events", "new.jsonl", "--no-input"], capsys)
    assert code == 0
    plain = (tmp_path / "pair.yaml").read_text().replace("timestamps: true", "timestamps: false")
    (tmp_path / "plain.yaml").write_text(plain)
    code, out = run_main(["replay", "new.jsonl", "--flow", "plain.yaml"], capsys)
    assert code == 4
    assert "-  [user] [20" in out and "+  [user] Write a line." in out


def test_the_provider_settings_that_shape_a_request_are_covered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file, events = record(tmp_path)
    warmer = CHANNEL.replace(
        "{kind: scripted, replies: [one,", "{kind: scripted, temperature: 0.2, replies: [one,"
    )
    assert not replay_with(tmp_path, events, warmer)
    # Where a call is sent is not what is asked: a timeout or a base_url is no difference.
    patient = CHANNEL.replace(
        "{kind: scripted, replies: [one,", "{kind: scripted, timeout: 9, replies: [one,"
    )
    assert replay_with(tmp_path, events, patient)
    (tmp_path / "edited.yaml").write_text(warmer)
    code, out = run_main(["replay", str(run_file), "--flow", str(tmp_path / "edited.yaml")], capsys)
    assert code == 4
    assert '+  team: kind "scripted", model "scripted", temperature 0.2' in out


def test_the_member_a_transcript_is_written_for_is_in_its_digest() -> None:
    flow = load_flow_text(CHANNEL, "digest.yaml")
    log = MemoryLog("r")
    asyncio.run(Runner(flow=flow, log=log).start())
    # Before either member spoke, both are shown the same entries, and have the same role:
    # only the transcript's last line, which names the member, tells their requests apart.
    state = fold(e for e in log.load() if e.seq <= 1)
    solver = seen_by(flow, state, "solver", "team")
    checker = seen_by(flow, state, "checker", "team")
    assert solver.messages[0].content != checker.messages[0].content
    assert solver.digest.legacy == checker.digest.legacy  # what the old form could not see
    digests = {
        request_digest("You answer.", (), s.digest, ()).finish(b"") for s in (solver, checker)
    }
    assert len(digests) == 2


def test_a_run_with_calls_of_both_forms_compares_each_the_way_it_was_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run recorded before and continued since holds both forms: each is compared its way.
    shutil.copytree(OLD_RUNS, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    old = JsonlLog(tmp_path / "pair.jsonl").load()
    calls = [i for i, e in enumerate(old) if isinstance(e, LlmCallEvent)]
    unknown = {"request_digest": FULL_FORM + "0" * 64}  # no legacy call: all made in full
    renewed = [e.model_copy(update=unknown) if i in calls else e for i, e in enumerate(old)]
    full = asyncio.run(replay_run(None, renewed)).events
    mixed = [full[i] if i in calls[1:] else e for i, e in enumerate(old)]
    forms = [is_legacy_digest(mixed[i].request_digest) for i in calls]  # type: ignore[union-attr]
    assert forms == [True, False, False]
    assert asyncio.run(replay_run(None, mixed)).identical
    wrong = old[calls[0]].model_copy(update={"request_digest": "sha256:" + "0" * 64})
    tampered = [wrong if i == calls[0] else e for i, e in enumerate(mixed)]
    assert not asyncio.run(replay_run(None, tampered)).identical
