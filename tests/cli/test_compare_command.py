"""``roost compare``: two flows over the same rows, the answers that changed, totals, a judge."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tests.cli_inprocess import run_cli

if TYPE_CHECKING:
    from pathlib import Path

FLOW = """\
roost: 1
name: echo
defaults: {provider: bot, max_rounds: 1}
providers:
  bot: {kind: scripted, replies: [REPLY], when_exhausted: repeat_last}
  grader:
    kind: scripted
    replies: ['{"prefer": "1", "reason": "it came first"}']
    when_exhausted: repeat_last
agents:
  USER: {interrupt: NEVER, role: The person.}
  bot: {role: You answer.}
start: {from: USER, to: bot}
"""


def two_flows(folder: Path, rows: int) -> None:
    (folder / "a.yaml").write_text(FLOW.replace("REPLY", "{echo: last}"))
    (folder / "b.yaml").write_text(FLOW.replace("REPLY", "same"))  # always says "same"
    lines = [json.dumps({"message": "same" if i % 2 else f"row {i}"}) for i in range(rows)]
    (folder / "in.jsonl").write_text("\n".join(lines) + "\n")


def test_the_rows_whose_answers_differ_the_totals_and_a_rerun_reuses_the_runs(
    tmp_path: Path,
) -> None:
    two_flows(tmp_path, 24)
    done = run_cli("compare", "a.yaml", "b.yaml", "in.jsonl", "--out", "c.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "12 of 24 answers changed" in done.stdout
    assert any("model calls" in line and "24" in line for line in done.stdout.splitlines())
    rows = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert len(rows) == 24
    assert (rows[0]["a"]["final"], rows[0]["b"]["final"]) == ("row 0", "same")
    assert [row["differs"] for row in rows[:2]] == [True, False]
    assert rows[0]["a"]["model_calls"] == 1
    again = run_cli("compare", "a.yaml", "b.yaml", "in.jsonl", cwd=tmp_path)
    assert again.stderr.count("0 to run, 24 finished before") == 2


def test_a_judge_sees_the_answers_in_a_recorded_random_order(tmp_path: Path) -> None:
    two_flows(tmp_path, 20)
    done = run_cli(
        "compare", "a.yaml", "b.yaml", "in.jsonl", "--judge", "grader", "--rubric", "Better.",
        "--seed", "7", "--out", "c.jsonl", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert [row["judge"] for row in rows if not row["differs"]] == [None] * 10
    rows = [row for row in rows if row["differs"]]
    # The judge always prefers the first answer shown: its preference follows the order.
    assert all(row["judge"]["prefer"] == row["judge"]["shown"][0] for row in rows)
    orders = {tuple(row["judge"]["shown"]) for row in rows}
    assert orders == {("a", "b"), ("b", "a")}
    a = sum(row["judge"]["prefer"] == "a" for row in rows)
    assert f"preferred: A {a}, B {10 - a}, tie 0" in done.stdout


def test_a_judge_without_a_rubric_is_bad_use(tmp_path: Path) -> None:
    two_flows(tmp_path, 1)
    done = run_cli("compare", "a.yaml", "b.yaml", "in.jsonl", "--judge", "grader", cwd=tmp_path)
    assert done.returncode == 2
    assert "give --judge PROVIDER and --rubric TEXT together" in done.stderr
