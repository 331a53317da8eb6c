"""Hostile batch inputs: a row nested 100,000 levels deep, a CSV quote never closed.

Each is one bad row named by its line; every other row of the file still runs.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from tests.attacks.conftest import Cli

FLOW = """\
roost: 1
name: rows
vars: {a: "1"}
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [{echo: last}, TERMINATE]}
agents:
  USER: {role: A person.}
  bot: {role: A bot.}
start: {from: USER, to: bot, content: Hi}
"""


def _results(path: Path) -> list[tuple[int, str, str | None, str | None]]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["row"], r["status"], r["final"], r["error"]) for r in rows]


def test_a_row_nested_100000_levels_deep_is_a_bad_row_and_the_others_run(
    tmp_path: Path, cli: Cli
) -> None:
    (tmp_path / "flow.yaml").write_text(FLOW)
    deep = "[" * 100_000 + "]" * 100_000
    # Deep enough to pass the JSON decoder and to break what writes the var into the flow.
    nested_var = json.dumps({"message": "x", "vars": {"a": "@"}}).replace(
        '"@"', "[" * 900 + "]" * 900
    )
    rows = [json.dumps({"message": "first"}), deep, nested_var, json.dumps({"message": "last"})]
    (tmp_path / "in.jsonl").write_text("\n".join(rows) + "\n")
    said = cli("batch", "flow.yaml", "in.jsonl")
    assert said.code == 3
    assert "line 2: nested deeper than 64 levels" in said.out
    assert "fix the 2 invalid rows in in.jsonl" in said.out
    assert _results(tmp_path / "in.jsonl.results.jsonl") == [
        (1, "terminated", "first", None),
        (2, "invalid", None, "line 2: nested deeper than 64 levels"),
        (3, "invalid", None, "line 3: nested deeper than 64 levels"),
        (4, "terminated", "last", None),
    ]
    assert said.lines  # no traceback


def test_a_csv_quote_never_closed_is_a_bad_row_and_the_rows_after_it_still_run(
    tmp_path: Path, cli: Cli
) -> None:
    (tmp_path / "flow.yaml").write_text(FLOW)
    (tmp_path / "in.csv").write_text(
        'message,a\nfirst,1\n"two\nlines",2\n"broken,3\nthird,4\nlast,5\n'
    )
    said = cli("batch", "flow.yaml", "in.csv")
    assert said.code == 3
    assert _results(tmp_path / "in.csv.results.jsonl") == [
        (2, "terminated", "first", None),
        (3, "terminated", "two\nlines", None),  # a quoted cell may hold a line break
        (5, "invalid", None, "line 5: not valid CSV: a quote opened in this row is never closed"),
        (6, "terminated", "third", None),
        (7, "terminated", "last", None),
    ]
    assert "fix the invalid row in in.csv" in said.out
