"""The results file: a line a row, as JSON Lines, or CSV when its name ends ``.csv``.

Each line holds ``row`` (the row's line in the inputs), ``run`` (its run's id),
``status``, ``final`` (the run's answer: ``RunState.answer``), ``tokens``, ``cost`` and
``error`` (why a row failed, else null), and ``data`` when the answer is a structured
reply (its parsed object; in CSV a column of JSON text, there when some row has it).
The file is written whole, in the order of the inputs, through a temporary file
renamed over it: a reader never sees half of it.
"""

from __future__ import annotations

import csv
import io
import json
import os
from typing import TYPE_CHECKING

from roost.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from roost.batch.rows import RowResult

COLUMNS = ("row", "run", "status", "final", "tokens", "cost", "error")


def default_out(inputs: Path) -> Path:
    """``questions.csv.results.jsonl`` beside ``questions.csv``: the inputs' whole name is
    kept, so that ``questions.csv`` and ``questions.jsonl`` never share a results file."""
    return inputs.with_name(f"{inputs.name}.results.jsonl")


def check_out(out: Path, inputs: Path) -> None:
    """UsageError, before anything runs, when the results cannot be written at ``out``."""
    if out.exists() and inputs.exists() and out.resolve() == inputs.resolve():
        raise UsageError(f"--out {out}: is the inputs file; give another file")
    if out.is_dir():
        raise UsageError(f"--out {out}: is a folder; give a file")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: no folder {str(out.parent)!r} to write it in")
    if not os.access(out.parent, os.W_OK):
        raise UsageError(f"--out {out}: cannot write in {str(out.parent)!r} (permission denied)")


def write_results(out: Path, results: list[RowResult]) -> None:
    """Writes every row's result to ``out``, replacing it at once."""
    rows = sorted(results, key=lambda result: result.row)
    if out.suffix.lower() == ".csv":
        text = _csv(rows)
    else:
        text = "".join(json.dumps(r.as_dict(), ensure_ascii=False) + "\n" for r in rows)
    temporary = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8", errors="surrogateescape", newline="")
        os.replace(temporary, out)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise UsageError(f"--out {out}: cannot write it: {exc.strerror or exc}") from exc


def _csv(rows: list[RowResult]) -> str:
    """The results as CSV; a ``data`` column (JSON text) when some answer has data."""
    structured = any(result.data is not None for result in rows)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=(*COLUMNS, "data") if structured else COLUMNS)
    writer.writeheader()
    for result in rows:
        fields = result.as_dict()
        if "data" in fields:
            fields["data"] = json.dumps(fields["data"], ensure_ascii=False)
        writer.writerow({k: "" if v is None else v for k, v in fields.items()})
    return buffer.getvalue()
