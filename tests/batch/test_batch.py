"""roost batch: a stored run a row, results a line a row, bad rows named, resumable."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fakes.llm_server import FakeLLMServer
from fakes.script import FakeUsage, Reply

from tests.batch.conftest import Roost, jsonl, results
from tests.fakes.stored_runs import stored

if TYPE_CHECKING:
    from pathlib import Path


def test_each_row_is_a_stored_run_of_the_batch_and_a_line_of_the_results(
    folder: Path, roost: Roost
) -> None:
    jsonl(folder / "q.jsonl", {"message": "hi"}, {"vars": {"topic": "cats"}}, {"message": "bye"})
    code, out, err = roost("batch", "two.yaml", "q.jsonl", "--batch", "b1")
    assert code == 0, out + err
    lines = results(folder / "q.jsonl.results.jsonl")
    assert [
        (r["row"], r["status"], r["final"], r["tokens"], r["cost"], r["error"]) for r in lines
    ] == [
        # the run's answer: the bot's echo, not the person's closing TERMINATE
        (1, "terminated", "hi", 0, None, None),
        (2, "terminated", "Tell me about cats.", 0, None, None),
        (3, "terminated", "bye", 0, None, None),
    ]
    runs = [r["run"] for r in lines]
    assert stored(folder, "b1") == sorted(runs) == stored(folder)
    assert all(run.startswith(("b1-1-", "b1-2-", "b1-3-")) for run in runs)
    assert out.splitlines()[0] == "batch b1: 3 rows (3 terminated); ran 3 now; 0 tokens; cost n/a"
    # The progress bar, on standard error; not a terminal here, so drawn once, as it ended.
    assert err.splitlines()[0] == "batch b1: 3 rows; 3 to run, 0 finished before, 0 invalid"
    assert re.fullmatch(
        r"━{20} 3/3 0 failed 0 tokens cost n/a [\d.,]+/s \d:\d\d:\d\d ETA 0:00:00",
        err.splitlines()[-1],
    )

    # An ordinary run: shown, replayed, listed by its batch; the vars are in its flow.
    code, shown, _ = roost("show", runs[1])
    assert "USER → bot: Tell me about cats." in shown
    code, replayed, _ = roost("replay", runs[1])
    assert (code, replayed.strip()) == (0, "identical: 7 events")
    code, listed, _ = roost("runs", "--batch", "b1")
    assert sorted(line.split()[0] for line in listed.splitlines()[1:]) == sorted(runs)
    code, listed, _ = roost("runs", "--batch", "b2")
    assert listed.strip() == "no runs stored"


def test_bad_rows_fail_with_their_line_and_the_batch_goes_on(folder: Path, roost: Roost) -> None:
    jsonl(
        folder / "q.jsonl",
        {"message": "hi"},
        "not json",
        {"message": "x", "vars": {"nope": 1}},
        {"message": "last"},
    )
    code, out, err = roost("batch", "two.yaml", "q.jsonl", "--batch", "b1")
    assert code == 3
    assert [
        (r["row"], r["status"], r["run"] is None) for r in results(folder / "q.jsonl.results.jsonl")
    ] == [
        (1, "terminated", False),
        (2, "invalid", True),
        (3, "invalid", True),
        (4, "terminated", False),
    ]
    assert " 4/4 2 failed " in err.splitlines()[-1]
    lines = out.splitlines()
    at = lines.index("2 rows did not finish:")
    assert lines[at + 1 : at + 3] == [
        "  line 2: not valid JSON: Expecting value (column 1)",
        "  line 3: unknown var 'nope' (the flow's vars: topic, tone)",
    ]
    assert len(stored(folder, "b1")) == 2


def test_running_again_runs_only_the_rows_without_a_finished_run(
    folder: Path, roost: Roost
) -> None:
    # Every row's first model call fails; a retry gets the next reply and finishes.
    flaky = (
        (folder / "two.yaml")
        .read_text()
        .replace("[{echo: last}, TERMINATE]", "[{error: busy}, {echo: last}, TERMINATE]")
    )
    (folder / "two.yaml").write_text(flaky)
    jsonl(folder / "q.jsonl", {"message": "a"}, {"message": "b"})
    code, out, _ = roost("batch", "two.yaml", "q.jsonl")
    assert code == 3
    first = results(folder / "q.jsonl.results.jsonl")
    assert [r["status"] for r in first] == ["error", "error"]
    assert first[0]["error"] == "line 1: error at bot: provider 'mock': busy"
    assert "run the same command again to retry the rows that stopped" in out
    assert "fix " not in out  # no row is invalid: none needs fixing

    jsonl(folder / "q.jsonl", {"message": "a"}, {"message": "b"}, {"message": "c"})
    code, out, err = roost("batch", "two.yaml", "q.jsonl")
    assert code == 3  # the new row fails its first call
    second = results(folder / "q.jsonl.results.jsonl")
    assert [r["status"] for r in second] == ["terminated", "terminated", "error"]
    assert [r["run"] for r in second[:2]] == [r["run"] for r in first]  # the same runs, retried
    assert "2 to run" not in err and "3 to run, 0 finished before" in err

    code, out, err = roost("batch", "two.yaml", "q.jsonl")
    assert code == 0
    assert "1 to run, 2 finished before, 0 invalid" in err
    assert "ran 1 now" in out
    assert len(stored(folder)) == 3  # never a second run for a row


def test_an_edited_row_gets_a_run_of_its_own(folder: Path, roost: Roost) -> None:
    jsonl(folder / "q.jsonl", {"message": "a"})
    roost("batch", "two.yaml", "q.jsonl", "--batch", "b1")
    jsonl(folder / "q.jsonl", {"message": "a, edited"})
    code, _, err = roost("batch", "two.yaml", "q.jsonl", "--batch", "b1")
    assert code == 0 and "1 to run, 0 finished before" in err
    assert len(stored(folder, "b1")) == 2


def test_csv_in_and_csv_out(folder: Path, roost: Roost) -> None:
    (folder / "q.csv").write_text("message,tone\nhi,dry\n,warm\n")
    code, out, _ = roost("batch", "two.yaml", "q.csv", "--out", "r.csv", "--batch", "b1")
    assert code == 0, out
    lines = (folder / "r.csv").read_text().splitlines()
    assert lines[0] == "row,run,status,final,tokens,cost,error"
    assert [line.split(",")[0::2] for line in lines[1:]] == [
        ["2", "terminated", "0", ""],
        ["3", "terminated", "0", ""],
    ]
    code, shown, _ = roost("show", lines[2].split(",")[1])
    assert "USER → bot: Tell me about owls." in shown  # no message: the flow's start


PRICED = """\
roost: 1
name: priced
providers:
  llm: {kind: openai, model: gpt-4o-mini, base_url: "URL/v1", api_key: k, max_retries: 0}
agents:
  USER: {role: A person., interrupt: ALWAYS}
  bot: {provider: llm, role: You answer.}
start: {from: USER, to: bot, content: hi}
"""


def test_a_row_of_a_priced_model_gets_its_cost(folder: Path, roost: Roost) -> None:
    # gpt-4o-mini costs $0.15 per million input tokens and $0.60 per million output tokens.
    with FakeLLMServer() as server:
        server.script(
            Reply(text="one TERMINATE", usage=FakeUsage(prompt=1000, completion=500)),
            Reply(text="two TERMINATE", usage=FakeUsage(prompt=101, completion=0)),
        )
        (folder / "priced.yaml").write_text(PRICED.replace("URL", server.url))
        jsonl(folder / "q.jsonl", {"message": "a"}, {"message": "b"})
        code, out, err = roost("batch", "priced.yaml", "q.jsonl", "--concurrency", "1")
    assert code == 0, out + err
    lines = results(folder / "q.jsonl.results.jsonl")
    assert [(r["tokens"], r["cost"], r["final"]) for r in lines] == [
        (1500, 0.00045, "one"),
        # 101 * 0.15 / 1e6 is 1.5149999999999999e-05 in floating point: written rounded
        (101, 1.515e-05, "two"),
    ]
    assert '"cost": 1.515e-05,' in (folder / "q.jsonl.results.jsonl").read_text()


# Each row's bot calls meet, which waits (at most a few seconds) until ROWS rows are in it
# at once: with --concurrency ROWS they all meet; one row at a time, each waits alone.
BARRIER_PY = '''\
import asyncio
import uuid
from pathlib import Path

ROWS = 3


async def meet() -> str:
    """Marks this row as arrived, then waits for the others to arrive too."""
    hall = Path(__file__).parent / "hall"
    hall.mkdir(exist_ok=True)
    (hall / uuid.uuid4().hex).touch()
    for _ in range(300):  # a bound: a row never waits for ever
        if len(list(hall.iterdir())) >= ROWS:
            return "met"
        await asyncio.sleep(0.01)
    return "alone"
'''
MEET = """\
roost: 1
name: meet
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [{tool_calls: [{name: meet, arguments: {}}]}, {echo: last}]}
tools:
  meet: {python: "barrier:meet", description: Wait for the other rows.}
agents:
  USER: {interrupt: ALWAYS}
  bot: {role: You meet the others., functions: [meet]}
start: {from: USER, to: bot, content: Meet the others.}
"""


def test_concurrency_n_runs_n_rows_at_once(folder: Path, roost: Roost) -> None:
    (folder / "barrier.py").write_text(BARRIER_PY)
    (folder / "meet.yaml").write_text(MEET)
    jsonl(folder / "q.jsonl", {"message": "a"}, {"message": "b"}, {"message": "c"})
    code, out, err = roost("batch", "meet.yaml", "q.jsonl", "--concurrency", "3")
    assert code == 0, out + err
    assert [r["final"] for r in results(folder / "q.jsonl.results.jsonl")] == ["met"] * 3


PAUSES = """\
roost: 1
name: pauses
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [{echo: last}]}
agents:
  USER: {interrupt: ALWAYS}
  bot: {role: You answer.}
start: {from: USER, to: bot, content: Hello.}
"""


def test_a_row_that_ended_paused_counts_as_finished_when_the_batch_runs_again(
    folder: Path, roost: Roost
) -> None:
    (folder / "pauses.yaml").write_text(PAUSES)
    jsonl(folder / "q.jsonl", {"message": "a"}, {"message": "b"})
    code, out, err = roost("batch", "pauses.yaml", "q.jsonl")
    assert code == 0, out + err
    first = results(folder / "q.jsonl.results.jsonl")
    assert [(r["status"], r["final"]) for r in first] == [("paused", "a"), ("paused", "b")]
    code, out, err = roost("batch", "pauses.yaml", "q.jsonl")
    assert code == 0, out + err
    assert "0 to run, 2 finished before, 0 invalid" in err
    assert "ran 0 now" in out
    assert results(folder / "q.jsonl.results.jsonl") == first
    assert len(stored(folder)) == 2
