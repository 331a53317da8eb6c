"""A row's run: found again by the next batch command, left as it finished, priced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakes.llm_server import FakeLLMServer
from fakes.script import FakeUsage, Reply

from tests.batch.conftest import Roost, jsonl, results
from tests.fakes.stored_runs import stored

if TYPE_CHECKING:
    from pathlib import Path


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
