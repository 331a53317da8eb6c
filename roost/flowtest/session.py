"""``roost test``: every case of the test files under some paths, run one after the other.

A test file that does not load is reported with its located problems and the
others still run; the exit status says what was found: 0 every case passed, 1
some case failed, 2 some test file (or path) was not valid.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from roost.errors import FlowError, Problem, UsageError
from roost.flowtest import SUFFIX
from roost.flowtest.cases import CaseResult, run_case
from roost.flowtest.spec import TestFile, find_test_files, load_test_file

if TYPE_CHECKING:
    from collections.abc import Callable

    from roost.store.sql import SqlStore


@dataclass
class Outcome:
    """What a ``roost test`` found: each case's result, the files that did not load."""

    results: list[CaseResult] = field(default_factory=list)
    # The problems of each test file that did not load (its flow's included), by file.
    invalid: dict[str, list[Problem]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def failed(self) -> list[CaseResult]:
        return [result for result in self.results if not result.passed]

    @property
    def exit_code(self) -> int:
        if self.invalid:
            return 2
        return 1 if self.failed else 0


def collect(paths: list[str]) -> tuple[list[TestFile], Outcome]:
    """The test files under ``paths`` that load, and an outcome listing those that do not."""
    files: list[TestFile] = []
    outcome = Outcome()
    for path in find_test_files(paths):
        problems = []
        if not path.exists():
            problems = [Problem(str(path), 1, 1, "no such file or folder")]
        elif not path.name.endswith(SUFFIX):
            problems = [Problem(str(path), 1, 1, f"not a test file (its name ends {SUFFIX})")]
        else:
            try:
                files.append(load_test_file(path))
            except FlowError as error:
                problems = error.errors
        if problems:
            outcome.invalid[str(path)] = problems
    if not files and not outcome.invalid:
        raise UsageError(f"no test files (*{SUFFIX}) in {', '.join(paths)}")
    return files, outcome


def run_tests(
    paths: list[str],
    on_result: Callable[[CaseResult], None] | None = None,
    *,
    store: SqlStore | None = None,
    repeat: int | None = None,
) -> Outcome:
    """Loads the test files under ``paths`` and runs every case of those that load.

    Each run of a case is kept in ``store`` (else in memory); ``repeat`` runs every
    case that many times instead of its own ``repeat``.
    """
    began = time.perf_counter()
    files, outcome = collect(paths)

    async def every_case() -> None:
        for file in files:
            for case in file.cases:
                result = await run_case(file, case, store=store, repeat=repeat)
                outcome.results.append(result)
                if on_result is not None:
                    on_result(result)

    asyncio.run(every_case())
    outcome.seconds = time.perf_counter() - began
    return outcome
