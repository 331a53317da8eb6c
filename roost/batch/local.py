"""Running a batch's rows in this process: ``concurrency`` rows at a time, on one event loop.

Each worker takes the next row, runs it to where it comes to rest and reports
it; a row that fails never stops the others. SIGTERM drains the workers
(``roost.batch.drain``): none takes another row, and the rows running end
within the grace. The store is shared: every append
is one transaction of its own.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from roost.batch.drain import Drain, on_sigterm
from roost.batch.inputs import Row
from roost.batch.rows import RowResult, over_budget, run_row
from roost.workspace import Workspace

if TYPE_CHECKING:
    from collections.abc import Callable

    from roost.batch.plan import Plan
    from roost.store.sql import SqlStore


async def run_local(
    plan: Plan,
    store: SqlStore,
    todo: list[int],
    concurrency: int,
    on_result: Callable[[int, RowResult], None],
    drain: Drain | None = None,
    budget: float | None = None,
) -> None:
    """Runs the rows at the indices ``todo`` of ``plan``, ``on_result(index, result)`` for each
    row that ran (a row a drain left unstarted has none).

    With a ``budget`` (US dollars), no row starts once the rows run here have spent it
    together: the rows running finish, and the rest are reported ``skipped``.
    """
    drain = drain or Drain()
    queue = list(reversed(todo))
    workspace = Workspace(store=store)  # one for every row: its memory is opened once
    spent = 0.0

    async def worker() -> None:
        nonlocal spent
        while queue and not drain.stopping:
            index = queue.pop()
            item = plan.items[index]
            assert isinstance(item.row, Row) and item.flow is not None and item.run_id
            if budget is not None and spent >= budget:
                on_result(index, over_budget(item.row.line, budget))
                continue
            new = item.run_id not in plan.stored
            result = await run_row(
                workspace,
                item.flow,
                item.row,
                plan.batch,
                item.run_id,
                new=new,
                watch=drain.runners,
            )
            spent += result.cost or 0.0
            on_result(index, result)

    workers = {asyncio.ensure_future(worker()) for _ in range(min(concurrency, len(todo)))}
    with on_sigterm(drain):
        await drain.wait(workers)
