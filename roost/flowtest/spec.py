"""Test files (``*.test.yaml``): what they may say, read and checked with located errors.

A test file names a flow and lists cases. A case runs the flow (its start
message, its ``vars``, scripted replies in place of some providers, answers to
its interrupts) and states what must come of it; or it replays a recorded run,
which must give the same events again. The file is read as flow files are
(positions kept, no tag constructs anything), and every problem is one line
``FILE:LINE:COL: error: ...``, the flow's own problems included. Each case's
flow is built and checked here, so that a case never fails halfway for a
reason the file already shows.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from roost.errors import FlowError, Problem
from roost.flow import check_flow_text
from roost.flow.envfiles import env_file_values
from roost.flow.envsubst import substitute
from roost.flow.loader import sorted_problems
from roost.flow.models import (
    ROUTE_END,
    Flow,
    ProviderConfig,
    ScriptedProviderConfig,
    ScriptedReply,
    Strict,
)
from roost.flow.overrides import flow_text_with
from roost.flow.positions import Path as KeyPath
from roost.flow.positions import Positions
from roost.flow.redact import clean
from roost.flow.routes import route_name
from roost.flow.schema_errors import translate
from roost.flow.yamlread import build, compose, read_source
from roost.flowtest import SUFFIX
from roost.loading import with_tools

FINAL_KEYS = ("equals", "contains", "matches")


class Final(Strict):
    """How the last message is checked: exactly one of the three."""

    equals: str | None = None
    contains: str | None = None
    matches: str | None = None  # a regular expression searched for in the message


class ToolCalled(Strict):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)  # a subset of the call's


class Judge(Strict):
    """A model that grades the whole transcript against ``rubric``."""

    rubric: str = Field(min_length=1)
    provider: str = Field(min_length=1)  # of the flow, or of the test file's providers:


class User(Strict):
    """A simulated person: answers every person's interrupt, as ``role`` says."""

    role: str = Field(min_length=1)
    provider: str = Field(min_length=1)  # of the flow, or of the test file's providers:
    max_turns: int = Field(6, ge=1)  # answers given; then the run stays where it is


class Expect(Strict):
    status: Literal["terminated", "paused", "error"] | None = None
    at: str | None = None  # the node the run ended, paused or stopped at
    final: Final | None = None
    tool_called: ToolCalled | list[ToolCalled] | None = None
    chosen: list[str] | None = None  # every director's choices, in order
    judge: Judge | list[Judge] | None = None  # every judge must pass
    tools_in_order: list[str] | None = None  # these calls happen in this order
    max_cost: float | None = Field(None, ge=0)  # dollars, by the price table
    max_tokens: int | None = Field(None, ge=0)  # prompt + completion, as reported
    max_model_calls: int | None = Field(None, ge=0)
    data: dict[str, Any] | None = None  # fields of the latest structured reply (a subset)
    route: list[str] | None = None  # the conditional routes taken, in order: critic→editor

    def judges(self) -> list[Judge]:
        """The judges, as a list (none, one or several)."""
        if self.judge is None:
            return []
        return self.judge if isinstance(self.judge, list) else [self.judge]


class Case(Strict):
    name: str = Field(min_length=1)
    message: str | None = None
    vars: dict[str, Any] = Field(default_factory=dict)
    replies: dict[str, list[ScriptedReply]] = Field(default_factory=dict)
    answers: list[str] = Field(default_factory=list)
    approvals: list[str] = Field(default_factory=list)  # answers to tool approvals, in order
    user: User | None = None
    repeat: int = Field(1, ge=1)  # runs of the case, each its own run
    pass_at: int | None = Field(None, ge=1)  # runs that must pass (default: all)
    expect: Expect | None = None
    replay: str | None = None


class TestFileModel(Strict):
    flow: str = Field(min_length=1)
    # Providers of the test file's own, for its judges and simulated people only.
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    cases: list[Case] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class Outside:
    """The test file's own providers, for a case's judges and simulated person, and the
    values their ``${NAME}`` placeholders read (secrets, masked in all they record)."""

    providers: dict[str, ProviderConfig] = field(default_factory=dict)
    secrets: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class _OwnProviders:
    """The test file's ``providers:`` with ``${NAME}`` filled, as a flow's are: the values
    read, and each provider's unset variables (an error once a case needs it unscripted)."""

    secrets: frozenset[str] = frozenset()
    unset: dict[str, list[Problem]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LoadedCase:
    """A case ready to run: its flow built, its place in the file known."""

    case: Case
    index: int
    line: int  # where the case starts in the test file (1-based)
    flow: Flow  # the flow with the case's vars and scripted providers
    replay: Path | None  # the recorded run to replay, resolved
    # The test file's own providers (the case's scripted replies in place of some).
    outside: Outside = field(default_factory=Outside)

    def times(self, repeat: int | None = None) -> tuple[int, int]:
        """How many runs (``repeat`` overrides the case's) and how many must pass."""
        runs = repeat or self.case.repeat
        return runs, min(self.case.pass_at or runs, runs)


@dataclass(frozen=True, slots=True)
class TestFile:
    path: Path
    flow_path: Path
    cases: list[LoadedCase] = field(default_factory=list)


def find_test_files(paths: list[str]) -> Iterator[Path]:
    """The test files of ``paths``: files as given, folders searched (hidden ones skipped)."""
    for given in paths:
        path = Path(given)
        if path.is_dir():
            yield from sorted(_walk(path))
        else:
            yield path


_SKIPPED = {"node_modules", "__pycache__", "site-packages"}


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIPPED]
        for name in files:
            if name.endswith(SUFFIX):
                yield Path(root) / name


def load_test_file(path: str | os.PathLike[str]) -> TestFile:
    """The test file at ``path`` with every case's flow built; FlowError when anything is wrong."""
    file = os.fspath(path)
    text = read_source(file)
    built = build(compose(text, file), file, mapping="a test file is a mapping (flow:, cases:)")
    if built.problems:
        raise FlowError(sorted_problems(built.problems))
    data, own = _own_providers(built.data, built.positions, file)
    try:
        model = TestFileModel.model_validate(data)
    except ValidationError as error:
        findings = translate(error, TestFileModel, built.positions, file)
        raise FlowError(
            sorted_problems(_masked(_said_of_a_test_file(f.problem), own) for f in findings)
        ) from None
    return _Checker(Path(file), model, data, built.positions, own).checked()


def _own_providers(data: Any, positions: Positions, file: str) -> tuple[Any, _OwnProviders]:
    """``data`` with ``${NAME}`` in its ``providers:`` read from the environment (over the
    .env files beside the test file), as a flow's are; what was read is secret."""
    providers = data.get("providers") if isinstance(data, dict) else None
    if not isinstance(providers, dict) or not providers:
        return data, _OwnProviders()
    env_files, problems = env_file_values(file)
    if problems:
        raise FlowError(problems)
    environ = {**env_files, **os.environ}
    filled: dict[str, Any] = {}
    secrets: set[str] = set()
    unset: dict[str, list[Problem]] = {}
    for name, config in providers.items():
        wrapped = {"providers": {name: config}}
        one, found = substitute(wrapped, positions, file, environ)
        if found.problems:  # kept as written, to be refused only where a case needs it
            unset[str(name)] = found.problems
            one, _ = substitute(wrapped, positions, file, environ, keep=True)
        else:
            secrets |= found.secrets
        filled[name] = one["providers"][name]
    return {**data, "providers": filled}, _OwnProviders(frozenset(secrets), unset)


def _masked(problem: Problem, own: _OwnProviders) -> Problem:
    """``problem`` with the values the test file's providers read masked."""
    message = clean(problem.message, own.secrets) if own.secrets else problem.message
    return Problem(problem.file, problem.line, problem.col, message, problem.severity)


def _said_of_a_test_file(problem: Problem) -> Problem:
    """A problem of the whole file, worded (by the flow's translator) as one of a flow."""
    if not problem.message.startswith("the flow "):
        return problem
    message = "the test file " + problem.message.removeprefix("the flow ")
    return Problem(problem.file, problem.line, problem.col, message, problem.severity)


class _Checker:
    """What the models cannot say: the flow loads, names exist, each case can run."""

    def __init__(
        self,
        path: Path,
        model: TestFileModel,
        data: Any,
        positions: Positions,
        own: _OwnProviders | None = None,
    ) -> None:
        self.path = path
        self.own = own or _OwnProviders()
        self.file = str(path)
        self.model = model
        self.data = data
        self.positions = positions
        self.problems: list[Problem] = []

    def problem(self, key: KeyPath, message: str, *, value: bool = True) -> None:
        line, col = self.positions.value(key) if value else self.positions.key(key)
        self.problems.append(Problem(self.file, line, col, message))

    def checked(self) -> TestFile:
        flow_path = self.path.parent / self.model.flow
        base = self._base_flow(flow_path)
        if base is not None:
            for name in self.model.providers:
                if name in base.names("providers"):
                    self.problem(
                        ("providers", name),
                        f"the flow has a provider {name!r} already: give this one another name",
                        value=False,
                    )
        names: dict[str, int] = {}
        cases = []
        for index, case in enumerate(self.model.cases):
            where: KeyPath = ("cases", index)
            if case.name in names:
                self.problem(
                    (*where, "name"),
                    f"a case named {case.name!r} comes before (case {names[case.name] + 1})",
                )
            names.setdefault(case.name, index)
            loaded = self._case(base, index, case) if base is not None else None
            if loaded is not None:
                cases.append(loaded)
        if self.problems:
            # The test file's own problems first, then those of the flow it names.
            ordered = sorted(sorted_problems(self.problems), key=lambda p: p.file != self.file)
            raise FlowError(ordered)
        return TestFile(self.path, flow_path, cases)

    def _base_flow(self, flow_path: Path) -> _Base | None:
        """The tested flow's text and the names it declares, read as plain YAML.

        Only the names are read here: the flow is validated case by case, once the
        case's providers are in place, so that a provider a case scripts needs none
        of its settings from the environment (its API key).
        """
        try:
            text = read_source(flow_path)
            built = build(compose(text, str(flow_path)), str(flow_path))
        except FlowError as error:
            reason = error.problems[0]
            if reason.file == str(flow_path) and reason.line == 1 and "such file" in reason.message:
                self.problem(("flow",), f"no flow file {self.model.flow!r} next to the test file")
            else:
                self.problems += error.errors
            return None
        return _Base(str(flow_path), text, built.data)

    def _case(self, base: _Base, index: int, case: Case) -> LoadedCase | None:
        where: KeyPath = ("cases", index)
        line = self.positions.key(where)[0]
        if case.replay is not None:
            return self._replay_case(base, index, case, line)
        if case.expect is None:
            self.problem(where, f"case {case.name!r}: give expect: (or replay: a recorded run)")
            return None
        self._check_expect(case.expect, (*where, "expect"))
        if case.message is None and not base.start_content():
            self.problem(where, f"case {case.name!r}: the flow has no start message; give message:")
        self._check_outside(base, case, where)
        flow = self._case_flow(base, case, where)
        if flow is None:
            return None
        self._check_routes(flow, case.expect, (*where, "expect", "route"))
        return LoadedCase(case, index, line, flow, None, self._outside(case))

    def _check_outside(self, base: _Base, case: Case, where: KeyPath) -> None:
        """The providers of the judges and the simulated person exist; pass_at fits."""
        known = [*base.names("providers"), *self.model.providers]
        named: list[tuple[KeyPath, str]] = []
        if case.user is not None:
            named.append(((*where, "user", "provider"), case.user.provider))
        assert case.expect is not None
        judge = case.expect.judge
        for number, one in enumerate(case.expect.judges()):
            at = ("judge", number) if isinstance(judge, list) else ("judge",)
            named.append(((*where, "expect", *at, "provider"), one.provider))
        for key, name in named:
            if name not in known:
                shown = ", ".join(known) or "none"
                self.problem(key, f"no provider {name!r} in the flow or the test file ({shown})")
            elif name not in case.replies:  # a provider the case scripts needs no variable
                self.problems += self.own.unset.get(name, [])
        if case.pass_at is not None and case.pass_at > case.repeat:
            self.problem(
                (*where, "pass_at"), f"pass_at {case.pass_at} is more than repeat {case.repeat}"
            )

    def _outside(self, case: Case) -> Outside:
        """The test file's providers, those the case scripts replaced by its replies."""
        own: dict[str, ProviderConfig] = dict(self.model.providers)
        for name, replies in case.replies.items():
            if name in own:
                own[name] = ScriptedProviderConfig(kind="scripted", replies=replies)
        return Outside(own, self.own.secrets)

    def _replay_case(self, base: _Base, index: int, case: Case, line: int) -> LoadedCase | None:
        where: KeyPath = ("cases", index)
        written = self.data["cases"][index]
        others = [
            key
            for key in ("message", "vars", "replies", "answers", "approvals", "user", "expect")
            if key in written
        ]
        if others:
            self.problem(
                (*where, others[0]),
                f"case {case.name!r}: a replay case takes only name and replay, not {others[0]}",
                value=False,
            )
            return None
        assert case.replay is not None
        # A recording that is missing fails this case when it runs, not the whole file.
        recording = self.path.parent / case.replay
        flow = self._flow(base.text, base.path)
        return LoadedCase(case, index, line, flow, recording) if flow is not None else None

    def _check_expect(self, expect: Expect, where: KeyPath) -> None:
        if expect.final is not None:
            given = [key for key in FINAL_KEYS if getattr(expect.final, key) is not None]
            if len(given) != 1:
                self.problem(
                    (*where, "final"), "final: give exactly one of equals, contains, matches"
                )
            elif expect.final.matches is not None:
                try:
                    re.compile(expect.final.matches)
                except re.error as exc:
                    self.problem((*where, "final", "matches"), f"not a regular expression: {exc}")
        fields = [k for k in Expect.model_fields if getattr(expect, k) is not None]
        if not fields:
            self.problem(where, "expect: give at least one of " + ", ".join(Expect.model_fields))

    def _check_routes(self, flow: Flow, expect: Expect, where: KeyPath) -> None:
        """Each expected route is ``WRITER→TARGET``, of an agent to an agent or TERMINATE."""
        for index, text in enumerate(expect.route or []):
            named = route_name(text)
            if named is None:
                self.problem((*where, index), f"route: write {text!r} as writer→target")
                continue
            source, to = named
            # The writer is an agent; the target an agent or TERMINATE.
            unknown = [n for n in (source, to) if n not in flow.agents]
            if to == ROUTE_END:
                unknown.remove(to)
            if unknown:
                agents = ", ".join(flow.agents) or "none"
                self.problem(
                    (*where, index),
                    f"route: the flow has no agent {unknown[0]!r} (its agents: {agents})",
                )

    def _case_flow(self, base: _Base, case: Case, where: KeyPath) -> Flow | None:
        """The flow with the case's vars and scripted providers, loaded with its tools."""
        unknown = False
        for key, section, what in (("vars", "vars", "var"), ("replies", "providers", "provider")):
            declared = base.names(section)
            own = list(self.model.providers) if key == "replies" else []
            for name in getattr(case, key):
                if name in own:
                    continue
                if name not in declared:
                    known = ", ".join(declared) or "none"
                    message = f"the flow has no {what} {name!r} (its {section}: {known})"
                    self.problem((*where, key, name), message, value=False)
                    unknown = True
        if unknown:
            return None
        raw = self.data["cases"][where[1]].get("replies", {})
        scripted = {
            name: {"kind": "scripted", "replies": raw[name]}
            for name in case.replies
            if name not in self.model.providers
        }
        text = flow_text_with(base.text, base.path, variables=case.vars, providers=scripted)
        return self._flow(text, base.path)

    def _flow(self, text: str, path: str) -> Flow | None:
        """``text`` loaded as the flow file ``path``, tools included; its errors noted."""
        try:
            return with_tools(check_flow_text(text, path))
        except FlowError as error:
            self.problems += error.errors
            return None


@dataclass(frozen=True, slots=True)
class _Base:
    """The tested flow as written: its path, its text and its plain YAML data."""

    path: str
    text: str
    data: dict[str, Any]

    def names(self, section: str) -> list[str]:
        entries = self.data.get(section)
        return [str(name) for name in entries] if isinstance(entries, dict) else []

    def start_content(self) -> bool:
        start = self.data.get("start")
        return isinstance(start, dict) and bool(start.get("content"))
