"""The serve configuration file (``roost serve --config serve.yaml``): its schedules.

A schedule starts a run of a flow from the flows folder at each tick of a
cron expression, read in a time zone. The file is read as flow files are
(positions kept, no tag constructs anything), and each problem is one line
``FILE:LINE:COL: error: ...``: a cron expression croniter refuses, a time
zone that does not exist, a flow that does not load, a var it does not declare.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterError, croniter
from pydantic import Field, ValidationError

from roost.errors import FlowError, Problem, RoostError
from roost.flow import Flow
from roost.flow.loader import sorted_problems
from roost.flow.models import Strict
from roost.flow.overrides import with_vars
from roost.flow.positions import Path as KeyPath
from roost.flow.positions import Positions
from roost.flow.schema_errors import translate
from roost.flow.yamlread import build, compose, read_source

CRON_FIELDS = 5  # minute hour day-of-month month day-of-week


class ScheduleModel(Strict):
    cron: str = Field(min_length=1)
    flow: str = Field(min_length=1)
    message: str | None = None
    vars: dict[str, Any] = Field(default_factory=dict)
    timezone: str = "UTC"


class ServeFileModel(Strict):
    schedules: dict[str, ScheduleModel] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Schedule:
    """One schedule: when (``cron`` in ``timezone``), and which run to start."""

    name: str
    cron: str
    flow: str  # a path inside the flows folder
    message: str | None = None
    vars: dict[str, Any] = field(default_factory=dict)
    timezone: str = "UTC"

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def ticks_after(self, moment: float) -> Iterator[datetime]:
        """The ticks strictly after ``moment`` (seconds since the epoch), in the time zone."""
        start = datetime.fromtimestamp(moment, self.zone)
        ticks = croniter(self.cron, start)
        while True:
            yield ticks.get_next(datetime)

    def next_after(self, moment: float) -> datetime:
        return next(self.ticks_after(moment))


def tick_key(tick: datetime) -> str:
    """A tick as stored: UTC, to the second, so that keys sort in time order."""
    return tick.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_tick_key(key: str) -> float:
    return datetime.strptime(key, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


@dataclass(frozen=True, slots=True)
class ServeFile:
    """A read serve configuration file; ``positions`` locate its keys for later checks."""

    path: str
    schedules: tuple[Schedule, ...]
    positions: Positions = field(default_factory=Positions, compare=False)

    def check_flows(self, load: Callable[[str], Flow]) -> None:
        """Loads each schedule's flow with its vars: FlowError naming every one that fails."""
        problems: list[Problem] = []
        for schedule in self.schedules:
            where: KeyPath = ("schedules", schedule.name)
            try:
                flow = load(schedule.flow)
            except FlowError as error:
                line, col = self.positions.value((*where, "flow"))
                reason = error.errors[0] if error.errors else None
                said = f"{reason.message} ({reason.file}:{reason.line})" if reason else str(error)
                problems.append(Problem(self.path, line, col, f"flow {schedule.flow}: {said}"))
                continue
            except RoostError as error:
                line, col = self.positions.value((*where, "flow"))
                problems.append(Problem(self.path, line, col, str(error)))
                continue
            unknown = [name for name in schedule.vars if name not in flow.vars]
            if unknown:
                line, col = self.positions.key((*where, "vars", unknown[0]))
                known = ", ".join(flow.vars) or "none"
                problems.append(
                    Problem(
                        self.path,
                        line,
                        col,
                        f"unknown var {unknown[0]!r} of flow {schedule.flow} (its vars: {known})",
                    )
                )
        if problems:
            raise FlowError(sorted_problems(problems))


def flow_for(schedule: Schedule, load: Callable[[str], Flow]) -> Flow:
    """The schedule's flow with its vars set."""
    return with_vars(load(schedule.flow), schedule.vars)


def load_serve_file(path: str | os.PathLike[str]) -> ServeFile:
    """The serve configuration at ``path``; FlowError with every located problem."""
    file = os.fspath(path)
    text = read_source(file)
    mapping = "a serve configuration is a mapping (schedules:)"
    built = build(compose(text, file), file, mapping=mapping)
    if built.problems:
        raise FlowError(sorted_problems(built.problems))
    try:
        model = ServeFileModel.model_validate(built.data)
    except ValidationError as error:
        findings = translate(error, ServeFileModel, built.positions, file)
        raise FlowError(sorted_problems(f.problem for f in findings)) from None
    problems: list[Problem] = []
    schedules = []
    for name, entry in model.schedules.items():
        where: KeyPath = ("schedules", name)
        problems += _cron_problems(file, built.positions, where, entry)
        schedules.append(Schedule(name, entry.cron, entry.flow, entry.message, entry.vars,
                                  entry.timezone))  # fmt: skip
    if problems:
        raise FlowError(sorted_problems(problems))
    return ServeFile(file, tuple(schedules), built.positions)


def _cron_problems(
    file: str, positions: Positions, where: KeyPath, entry: ScheduleModel
) -> list[Problem]:
    """What is wrong with a schedule's cron expression and time zone."""
    problems = []
    fields = entry.cron.split()
    reason: str | None = None
    if not entry.cron.startswith("@") and len(fields) != CRON_FIELDS:
        reason = (
            f"{len(fields)} fields; a cron expression has 5: "
            "minute hour day-of-month month day-of-week"
        )
    else:
        try:
            croniter(entry.cron)
        except (CroniterError, ValueError, KeyError) as error:
            reason = str(error).split("\n")[0] or type(error).__name__
    if reason is not None:
        line, col = positions.value((*where, "cron"))
        message = f"schedule {where[-1]!r}: bad cron expression {entry.cron!r}: {reason}"
        problems.append(Problem(file, line, col, message))
    try:
        ZoneInfo(entry.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        line, col = positions.value((*where, "timezone"))
        message = (
            f"schedule {where[-1]!r}: unknown time zone {entry.timezone!r} "
            "(an IANA name such as Europe/Paris, or UTC)"
        )
        problems.append(Problem(file, line, col, message))
    return problems
