"""roost run, continue and retry as a user runs them: exit codes, one-line errors, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.engine.conftest import ASK
from tests.fakes.commands import roost

REPO = Path(__file__).resolve().parents[2]
FLOWS = REPO / "flows"

BROKEN = ASK.replace("[four, own words, five, TERMINATE]", "[{error: down}, fine, TERMINATE]")


def seqs(path: Path) -> list[int]:
    return [json.loads(line)["seq"] for line in path.read_text().splitlines()]


def test_the_readme_flow_runs_to_the_end_offline(tmp_path: Path) -> None:
    result = roost("run", str(FLOWS / "hello.yaml"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "terminated" in result.stdout
    # It names who said TERMINATE, not the node the last message went to.
    assert "— terminated: assistant said TERMINATE —" in result.stdout, result.stdout


def test_without_a_terminal_the_run_pauses_and_says_how_to_continue(
    tmp_path: Path, ask: Path
) -> None:
    events = tmp_path / "run.jsonl"
    result = roost("run", str(ask), "--events", str(events), cwd=tmp_path)
    assert result.returncode == 0
    run_id = json.loads(events.read_text().splitlines()[0])["run"]
    assert f"roost continue {run_id} --answer TEXT" in result.stdout
    assert "bot waits for USER" in result.stdout


def test_answers_are_used_in_order_and_empty_means_no_feedback(tmp_path: Path, ask: Path) -> None:
    events = tmp_path / "run.jsonl"
    result = roost(
        "run", str(ask), "--answer", "", "--answer", "ok", "--events", str(events), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    said = [(e["from"], e["content"]) for e in lines if e["type"] == "message"]
    assert said == [
        ("USER", "2 + 2?"),
        ("bot", "four"),
        ("USER", "own words"),
        ("bot", "five"),
        ("USER", "ok"),
        ("bot", "TERMINATE"),
    ]
    assert lines[-1]["type"] == "terminate"


def test_two_processes_continue_in_turn_and_seq_stays_contiguous(tmp_path: Path, ask: Path) -> None:
    events = tmp_path / "run.jsonl"
    assert (
        roost("run", str(ask), "--events", str(events), "--no-input", cwd=tmp_path).returncode == 0
    )
    first = roost("continue", str(events), "--answer", "hm", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = roost("continue", str(events), "--answer", "thanks", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert seqs(events) == list(range(len(seqs(events))))
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["content"] for e in lines if e["type"] == "message"][-2:] == ["thanks", "five"]


def test_continue_without_an_answer_or_terminal_shows_both_ways(tmp_path: Path, ask: Path) -> None:
    events = tmp_path / "run.jsonl"
    roost("run", str(ask), "--events", str(events), cwd=tmp_path)
    result = roost("continue", str(events), cwd=tmp_path)
    assert result.returncode == 2
    assert "--answer TEXT" in result.stderr and "--answer ''" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_error_exits_3_and_retry_goes_on(tmp_path: Path) -> None:
    flow = tmp_path / "broken.yaml"
    flow.write_text(BROKEN)
    events = tmp_path / "run.jsonl"
    result = roost("run", str(flow), "--events", str(events), cwd=tmp_path)
    assert result.returncode == 3
    assert "down" in result.stderr and "roost retry" in result.stderr
    again = roost("retry", str(events), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert roost("retry", str(events), cwd=tmp_path).returncode == 2


def test_the_stored_run_can_be_continued_by_its_id(tmp_path: Path, ask: Path) -> None:
    events = tmp_path / "run.jsonl"
    roost("run", str(ask), "--events", str(events), cwd=tmp_path)
    run_id = json.loads(events.read_text().splitlines()[0])["run"]
    result = roost("continue", run_id, "--answer", "", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "own words" in result.stdout


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, ask: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("roost: 1\nname: x\nagents: {a: {nope: 1}}\n")
    result = roost("run", str(bad), cwd=tmp_path)
    assert result.returncode == 2 and "bad.yaml:" in result.stderr
    result = roost("run", str(ask), "--to", "nobody", cwd=tmp_path)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    result = roost("continue", "no-such-run", "--answer", "x", cwd=tmp_path)
    assert result.returncode == 2
    result = roost("run", str(tmp_path / "missing.yaml"), cwd=tmp_path)
    assert result.returncode == 2
    result = roost("run", str(ask), "--to", "USER", cwd=tmp_path)  # the start's own sender
    assert result.returncode == 2 and "'USER' to itself" in result.stderr
    for events in (str(tmp_path), str(ask / "run.jsonl")):  # a folder; a file in the way
        result = roost("run", str(ask), "--events", events, "--no-input", cwd=tmp_path)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
        assert events in result.stderr
    # None of these bad uses left a run behind.
    assert roost("runs", cwd=tmp_path).stdout.strip() == "no runs stored"


def test_continue_or_retry_on_a_run_in_the_wrong_state_is_one_line_and_exit_2(
    tmp_path: Path, ask: Path
) -> None:
    paused = tmp_path / "paused.jsonl"
    roost("run", str(ask), "--events", str(paused), "--no-input", cwd=tmp_path)
    result = roost("retry", str(paused), cwd=tmp_path)
    assert result.returncode == 2 and "paused" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    done = tmp_path / "done.jsonl"
    roost("run", str(ask), "--events", str(done), "--answer", "", "--answer", "x", cwd=tmp_path)
    assert json.loads(done.read_text().splitlines()[-1])["type"] == "terminate"
    for args in (("continue", str(done), "--answer", "x"), ("retry", str(done))):
        result = roost(*args, cwd=tmp_path)
        assert result.returncode == 2 and "terminated" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    broken = tmp_path / "broken.yaml"
    broken.write_text(BROKEN)
    failed = tmp_path / "failed.jsonl"
    assert roost("run", str(broken), "--events", str(failed), cwd=tmp_path).returncode == 3
    result = roost("continue", str(failed), "--answer", "x", cwd=tmp_path)
    assert result.returncode == 2 and "retry" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_output_that_cannot_be_written_is_one_line(tmp_path: Path, ask: Path) -> None:
    code = "import sys; from roost.cli import main; main(sys.argv[1:])"
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-c", code, "schema"],
            cwd=tmp_path,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "roost: error: cannot write the output: No space left on device"
    ]


def test_what_a_tool_module_prints_on_import_stays_off_standard_output(tmp_path: Path) -> None:
    (tmp_path / "noisy.py").write_text('print("IMPORT NOISE")\n\ndef f() -> str:\n    return "x"\n')
    (tmp_path / "f.yaml").write_text(
        "roost: 1\ntools: {f: {python: 'noisy:f'}}\n"
        "agents: {a: {role: r, interrupt: ALWAYS, functions: [f]}}\n"
    )
    result = roost("validate", "f.yaml", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, "f.yaml: ok\n")


def test_retry_takes_answers_and_no_input_as_continue_does(tmp_path: Path) -> None:
    flow = tmp_path / "broken.yaml"
    flow.write_text(BROKEN)
    events = tmp_path / "run.jsonl"
    assert roost("run", str(flow), "--events", str(events), cwd=tmp_path).returncode == 3
    retried = roost("retry", str(events), "--no-input", cwd=tmp_path)
    assert retried.returncode == 0 and "paused: bot waits for USER" in retried.stdout
    assert (
        roost("run", str(flow), "--events", str(tmp_path / "b.jsonl"), cwd=tmp_path).returncode == 3
    )
    answered = roost("retry", str(tmp_path / "b.jsonl"), "--answer", "ok", cwd=tmp_path)
    assert answered.returncode == 0, answered.stderr
    said = [json.loads(line) for line in (tmp_path / "b.jsonl").read_text().splitlines()]
    assert [e["content"] for e in said if e["type"] == "message"][-2:] == ["ok", "TERMINATE"]
    assert said[-1]["type"] == "terminate"
