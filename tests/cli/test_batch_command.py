"""``roost batch FLOW INPUTS`` misused: one line, exit 2, and nothing stored."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.batch import conftest as batch
from tests.batch.conftest import Roost, jsonl
from tests.fakes.stored_runs import stored

if TYPE_CHECKING:
    from pathlib import Path


# The batch tests' fixtures (the folder with two.yaml, roost batch in this process), not
# tests/cli/conftest.py's store command line.
folder, roost = batch.folder, batch.roost

BATCH_ID_RULE = "use 1 to 40 letters, digits, '.', '_' or '-', starting with a letter or digit"
CONCURRENCY = "Input should be greater than or equal to 1"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("two.yaml", "none.jsonl"), "none.jsonl: no such inputs file"),
        (("two.yaml", "q.txt"), "q.txt: give the inputs as a .jsonl or .csv file"),
        (("none.yaml", "q.jsonl"), "none.yaml:1:1: error: no such file"),
        (
            ("two.yaml", "q.jsonl", "--out", "no/r.jsonl"),
            "--out no/r.jsonl: no folder 'no' to write it in",
        ),
        (
            ("two.yaml", "q.jsonl", "--out", "q.jsonl"),
            "--out q.jsonl: is the inputs file; give another file",
        ),
        (("two.yaml", "q.jsonl", "--batch", "a b"), f"--batch 'a b': {BATCH_ID_RULE}"),
        (
            ("two.yaml", "q.jsonl", "--concurrency", "0"),
            f"roost: error: Invalid value for '--concurrency': {CONCURRENCY}",
        ),
    ],
)
def test_bad_use_is_one_line_and_exit_2(
    folder: Path, roost: Roost, args: tuple[str, ...], message: str
) -> None:
    jsonl(folder / "q.jsonl", {"message": "hi"})
    code, _, err = roost("batch", *args)
    assert (code, err.strip()) == (2, message)
    assert not (folder / ".roost").exists() or stored(folder) == []
