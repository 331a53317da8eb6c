"""A batch's plan: each row checked before anything runs, a bad row named by its line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.batch.conftest import Roost, jsonl, results
from tests.fakes.stored_runs import stored

if TYPE_CHECKING:
    from pathlib import Path


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
