"""What a batch will do: its id, its flow, each row checked and named by its run id.

The batch id is made from where the inputs and the flow are, so the same
command names the same batch the next time it runs (``--batch`` names another
one). Each row is checked against the flow before anything runs: a var the
flow does not declare or a missing message fails that row alone. The rows that
already have a finished run are found in the store, in one query.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roost.batch.inputs import BadRow, Row, row_problem
from roost.batch.rows import FINISHED, RowResult, bad_row, finished_result, run_id_for
from roost.errors import FlowError, UsageError
from roost.flow.overrides import with_vars

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flow.models import Flow
    from roost.store.sql import SqlStore

BATCH_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


def default_batch_id(inputs: Path, flow: Path) -> str:
    """``questions-3f9a2c``: the inputs' name and a digest of both files' full paths."""
    where = f"{inputs.resolve()}\0{flow.resolve()}"
    digest = hashlib.sha256(where.encode("utf-8", "surrogateescape")).hexdigest()[:6]
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", inputs.name.split(".")[0])[:24].strip("._-")
    return f"{stem or 'batch'}-{digest}"


def check_batch_id(batch: str) -> str:
    if not BATCH_ID.match(batch):
        raise UsageError(
            f"--batch {batch!r}: use 1 to 40 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return batch


@dataclass(frozen=True, slots=True)
class Item:
    """One row of the plan: a row to run under its own flow, or a row that fails as it is."""

    row: Row | BadRow
    run_id: str | None = None
    flow: Flow | None = None

    @property
    def line(self) -> int:
        return self.row.line


@dataclass
class Plan:
    batch: str
    flow: Flow
    items: list[Item] = field(default_factory=list)
    stored: set[str] = field(default_factory=set)  # run ids the store had when settled

    @classmethod
    def of(cls, batch: str, flow: Flow, rows: list[Row | BadRow]) -> Plan:
        plan = cls(batch, flow)
        flows: dict[str, Flow] = {}  # rows with the same vars share their flow
        has_start = bool(flow.start and flow.start.content)
        for row in rows:
            plan.items.append(plan._item(row, flows, has_start))
        return plan

    def _item(self, row: Row | BadRow, flows: dict[str, Flow], has_start: bool) -> Item:
        if isinstance(row, BadRow):
            return Item(row)
        problem = row_problem(row, self.flow.vars, has_start)
        if problem is not None:
            return Item(BadRow(row.line, problem))
        key = json.dumps(row.vars, sort_keys=True, default=str)
        flow = flows.get(key)
        if flow is None:
            try:
                flow = flows[key] = with_vars(self.flow, row.vars)
            except FlowError as error:  # a var whose value the text cannot take (an alias)
                return Item(BadRow(row.line, str(error)))
        return Item(row, run_id_for(self.batch, row), flow)

    def settled(self, store: SqlStore) -> dict[int, RowResult]:
        """The results of the rows that need no run now: bad rows and finished runs."""
        stored = {info.id: info.status for info in store.runs(batch=self.batch)}
        self.stored = set(stored)
        done: dict[int, RowResult] = {}
        for index, item in enumerate(self.items):
            if isinstance(item.row, BadRow):
                done[index] = bad_row(item.row)
            elif item.run_id is not None and stored.get(item.run_id) in FINISHED:
                events = store.log(item.run_id).load()
                done[index] = finished_result(item.line, item.run_id, events)
        return done


def describe(item: Item) -> dict[str, Any]:
    """What a worker needs to run ``item``: plain data (a Ray task's argument)."""
    assert isinstance(item.row, Row) and item.flow is not None
    return {
        "line": item.row.line, "message": item.row.message, "vars": item.row.vars,
        "run_id": item.run_id, "text": item.flow.text, "path": item.flow.path,
    }  # fmt: skip
