"""A pytest plugin: ``pytest`` collects flow test files (``*.test.yaml``) and runs their cases.

Installed with roost (the ``pytest11`` entry point), so a project's ``pytest``
runs its flow tests beside its Python tests, each case one test item. Only
files whose names end in ``.test.yaml`` are collected; nothing of roost is
imported until pytest meets one.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import pytest

from roost.flowtest import SUFFIX

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from roost.flowtest.cases import CaseResult
    from roost.flowtest.spec import LoadedCase, TestFile


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name.endswith(SUFFIX):
        collector: FlowTestFile = FlowTestFile.from_parent(parent, path=file_path)
        return collector
    return None


class FlowTestFile(pytest.File):
    """A test file; an invalid one is a collection error showing its located problems."""

    def collect(self) -> Iterator[pytest.Item]:
        from roost.flowtest.spec import load_test_file

        loaded = load_test_file(self.path)
        for case in loaded.cases:
            yield FlowCase.from_parent(self, name=case.case.name, loaded=loaded, case=case)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        from roost.errors import RoostError

        if isinstance(excinfo.value, RoostError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class FlowCase(pytest.Item):
    """One case of a test file."""

    def __init__(self, *, loaded: TestFile, case: LoadedCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.loaded = loaded
        self.case = case

    def runtest(self) -> None:
        from roost.flowtest.cases import run_case

        result = asyncio.run(run_case(self.loaded, self.case))
        # Written by pytest --junit-xml as the case's properties: the tally, the verdicts.
        if result.tally:
            self.user_properties.append(("runs", result.tally))
        self.user_properties += [("judge", note) for note in result.notes]
        if not result.passed:
            raise CaseFailed(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, CaseFailed):
            return "\n".join([*excinfo.value.result.failures, *excinfo.value.result.details])
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.line - 1, f"{self.path.name}::{self.name}"


class CaseFailed(Exception):
    """A case whose expectations were not met."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(result.failures[0])
        self.result = result
