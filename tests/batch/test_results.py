"""The results file: a line a row as JSON Lines or CSV, with the answer's structured data."""

from __future__ import annotations

import csv
import json
from typing import TYPE_CHECKING

from tests.batch.conftest import Roost, jsonl, results

if TYPE_CHECKING:
    from pathlib import Path

# The grader echoes each row's message, a JSON object its reply_format accepts.
GRADER = """\
roost: 1
name: grader
providers:
  echo: {kind: scripted, replies: [{echo: last}]}
  done: {kind: scripted, replies: [TERMINATE]}
agents:
  USER: {provider: done, role: A person.}
  grader:
    provider: echo
    role: You grade.
    reply_format:
      type: object
      properties: {score: {type: integer}, why: {type: string}}
      required: [score]
start: {from: USER, to: grader, content: "{}"}
"""

ROWS = ({"message": '{"score": 3, "why": "thin"}'}, {"message": '{"score": 5}'})


def test_each_line_carries_the_answers_data(folder: Path, roost: Roost) -> None:
    (folder / "grader.yaml").write_text(GRADER)
    jsonl(folder / "q.jsonl", *ROWS)
    code, out, err = roost("batch", "grader.yaml", "q.jsonl")
    assert code == 0, out + err
    lines = results(folder / "q.jsonl.results.jsonl")
    assert [(r["final"], r["data"]) for r in lines] == [
        ('{"score": 3, "why": "thin"}', {"score": 3, "why": "thin"}),
        ('{"score": 5}', {"score": 5}),
    ]


def test_a_csv_has_a_data_column_of_json_when_some_answer_has_data(
    folder: Path, roost: Roost
) -> None:
    (folder / "grader.yaml").write_text(GRADER)
    jsonl(folder / "q.jsonl", *ROWS)
    code, out, err = roost("batch", "grader.yaml", "q.jsonl", "--out", "r.csv")
    assert code == 0, out + err
    with (folder / "r.csv").open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert [json.loads(row["data"]) for row in rows] == [{"score": 3, "why": "thin"}, {"score": 5}]


def test_answers_without_data_leave_the_field_and_the_column_out(
    folder: Path, roost: Roost
) -> None:
    jsonl(folder / "q.jsonl", {"message": "hi"})
    roost("batch", "two.yaml", "q.jsonl")
    [line] = results(folder / "q.jsonl.results.jsonl")
    assert "data" not in line
    roost("batch", "two.yaml", "q.jsonl", "--out", "r.csv")
    header = (folder / "r.csv").read_text().splitlines()[0]
    assert header == "row,run,status,final,tokens,cost,error"


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
