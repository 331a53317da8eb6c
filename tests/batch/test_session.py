"""roost batch: a stored run a row, results a line a row."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

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
