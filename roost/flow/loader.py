"""``read_flow``: a flow file in, a ``Flow`` valid as language out, or a FlowError.

The language alone: ``roost.load_flow`` checks a flow's tools as well.

Validation goes on past every problem it can: a value with a wrong type or an
unset variable is reported, left out of the flow (``dropped``), and the rest is
still checked, so that one ``roost validate`` shows a missing variable, a bad
reference and a bad type together. Only a file that cannot be read as YAML at
all stops at its first problem.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from roost.errors import FlowError, Problem
from roost.flow.checks import Checker, check_flow
from roost.flow.describe import Hints, label, one_of
from roost.flow.envfiles import env_file_values
from roost.flow.envsubst import Substitution, substitute
from roost.flow.graph import check_graph
from roost.flow.models import Flow
from roost.flow.redact import clean
from roost.flow.schema_errors import translate
from roost.flow.yamlread import build, compose, read_source

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from roost.flow.positions import Path, Positions

_PASSES = 8  # validations, each without what the last one reported (nesting is shallow)
MAX_PROBLEMS = 1000  # problems listed for one file; a file with more is not hand-written


@dataclass(frozen=True, slots=True)
class Checked:
    """A flow file's problems, and the flow made of what was right in it (None if nothing).

    The flow holds every part that validated; a part reported as wrong is left
    out, so that later checks (its tools) can still run on the rest.
    """

    flow: Flow | None
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        return self.flow is not None and not any(p.severity == "error" for p in self.problems)


def read_flow(path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None) -> Flow:
    """Reads, substitutes and validates the flow file at ``path`` as language (tools unchecked)."""
    return _loaded(check_flow_file(path, environ=environ))


def load_flow_text(text: str, path: str, *, environ: Mapping[str, str] | None = None) -> Flow:
    """Validates ``text`` as the flow file ``path`` (used in messages and for relative files).

    ``environ`` defaults to ``os.environ`` completed by the ``.env`` files beside
    the flow and in the current folder (the environment winning). Warnings are on
    ``flow.warnings``; any error raises ``FlowError`` holding every problem, warnings included.
    """
    return _loaded(check_flow_text(text, path, environ=environ))


def check_flow_file(
    path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None
) -> Checked:
    """Every problem of the flow file at ``path``; never raises for a bad file."""
    file = os.fspath(path)
    try:
        text = read_source(file)
    except FlowError as error:
        return Checked(None, error.problems)
    return check_flow_text(text, file, environ=environ)


def load_recorded_flow(text: str, path: str) -> Flow:
    """The flow a run recorded, as text from anywhere: for showing, drawing and replaying.

    No environment variable and no ``.env`` file is read, so its ``public_env``
    decides nothing: each ``${NAME:-default}`` gives its default, each other
    placeholder stays as written (a value that then does not validate is left
    out, its default taken). Only a flow the user gives reads the environment.
    """
    flow = _loaded(check_flow_text(text, path, recorded=True))
    flow._from_record = True
    return flow


def unchecked_flow(data: Mapping[str, Any], path: str, text: str = "") -> Flow:
    """The flow ``data`` describes, validated by the models alone: no ``${NAME}``, no
    checks. For a program that gives the flow's tools in code, which the checks would
    refuse as undeclared (an engine's test); ``path`` and ``text`` are where it says it
    came from, as a loaded flow's are."""
    flow = Flow.model_validate(data)
    flow._path = path
    flow._text = text
    return flow


def check_flow_text(
    text: str, path: str, *, environ: Mapping[str, str] | None = None, recorded: bool = False
) -> Checked:
    """Every problem of ``text`` as the flow file ``path``; never raises for a bad flow.

    ``recorded``: the text is a run's record (see ``load_recorded_flow``).
    """
    file = str(path)
    try:
        built = build(compose(text, file), file)
    except FlowError as error:
        return Checked(None, error.problems)
    positions = built.positions
    public = frozenset() if recorded else _public_variables(built.data)
    reads_files = environ is None and not recorded
    env_files, env_problems = env_file_values(file) if reads_files else ({}, [])
    if env_problems:  # a value missing from a broken .env would only mislead later checks
        return Checked(None, env_problems)
    # A caller that passes ``environ`` gets exactly that (tests, embedders); only the
    # process environment is completed by the .env files, and it wins over them.
    env = {} if recorded else environ if environ is not None else {**env_files, **os.environ}
    data, found = substitute(built.data, positions, file, env, public, keep=recorded)
    secrets = frozenset(found.secrets)
    problems = [*built.problems, *found.problems, *_secrets_in_templates(found, file)]
    dropped = built.dropped | found.unset
    data = without(data, dropped)
    if "name" not in data:  # the contract requires only the version: name it after its file
        data = {**data, "name": FsPath(file).stem or "flow"}
    hints = Hints()
    flow, findings, dropped = _validate(data, positions, file, hints, dropped, found.kept)
    problems += findings
    if flow is not None:
        flow._path = file
        flow._text = text
        flow._secrets = secrets
        flow._env_files = env_files
        flow._positions = dict(positions.keys)
        checker = Checker(flow, positions, dropped, hints)
        check_flow(checker)
        check_graph(checker)
        problems += checker.problems
    result = _at_most(sorted_problems(problems), file)
    result = [_masked(p, secrets) for p in result]
    if flow is not None:
        flow._warnings = tuple(p for p in result if p.severity == "warning")
    return Checked(flow, result)


def _loaded(checked: Checked) -> Flow:
    if not checked.ok:
        raise FlowError(checked.problems)
    assert checked.flow is not None
    return checked.flow


def sorted_problems(problems: Iterable[Problem]) -> list[Problem]:
    """``problems`` without repeats, in the order of the file."""
    unique = {(p.line, p.col, p.severity, p.message): p for p in problems}
    return sorted(unique.values(), key=lambda p: (p.line, p.col))


def _at_most(problems: list[Problem], file: str) -> list[Problem]:
    """The first ``MAX_PROBLEMS`` problems, errors first, and a line saying how many more."""
    if len(problems) <= MAX_PROBLEMS:
        return problems
    errors = [p for p in problems if p.severity == "error"][:MAX_PROBLEMS]
    warnings = [p for p in problems if p.severity != "error"][: MAX_PROBLEMS - len(errors)]
    shown = sorted([*errors, *warnings], key=lambda p: (p.line, p.col))
    more = len(problems) - MAX_PROBLEMS
    last = shown[-1]
    note = f"{more:,} more problems follow; the first {MAX_PROBLEMS:,} are listed, fix these first"
    return [*shown, Problem(file, last.line, last.col, note)]


def _masked(problem: Problem, secrets: frozenset[str]) -> Problem:
    if not secrets and problem.message.isprintable():
        return problem  # nothing to mask or escape: most messages, the cheap way
    message = clean(problem.message, secrets)
    if message == problem.message:
        return problem
    return Problem(problem.file, problem.line, problem.col, message, problem.severity)


# ----------------------------------------------------------------------------- secrets


def _public_variables(data: dict[str, Any]) -> frozenset[str]:
    """The environment variables the flow lists under ``public_env`` (validated later)."""
    listed = data.get("public_env")
    if not isinstance(listed, list):
        return frozenset()
    return frozenset(name for name in listed if isinstance(name, str))


def _template_readable(path: Path) -> bool:
    """Whether a template can read the value at ``path``: vars, roles, prompts, start."""
    if not path:
        return False
    if path[0] == "vars" or path == ("start", "content"):
        return True
    if len(path) == 3 and path[0] == "agents":
        return path[2] in ("role", "description")
    if len(path) >= 3 and path[0] == "channels":
        return path[2:] in (("role",), ("director", "prompt"))
    return False


def _secrets_in_templates(found: Substitution, file: str) -> list[Problem]:
    """A secret that a template can read could leave masked text changed: refused.

    A template may print ``{{ vars.key[1:] }}`` or ``|reverse``: the key, changed,
    would escape the masking of events. So no value a template reads (``vars``,
    roles, director prompts, descriptions, the start message) may come from a
    secret variable; a flow lists under ``public_env`` the variables that are not.
    """
    problems = []
    for path, names in found.read.items():
        if _template_readable(path):
            quoted = one_of(dict.fromkeys(repr(n) for n in names))
            line, col = found.positions.value(path)
            message = (
                f"{label(path)}: templates may not read the environment variable {quoted}: "
                "a template could copy a secret into events in a form that is not masked; "
                "list it under public_env if it is not secret"
            )
            problems.append(Problem(file, line, col, message))
    return problems


# ----------------------------------------------------------------------------- validation


def _validate(
    data: dict[str, Any],
    positions: Positions,
    file: str,
    hints: Hints,
    dropped: set[Path],
    unread: set[Path] | frozenset[Path] = frozenset(),
) -> tuple[Flow | None, list[Problem], set[Path]]:
    """The flow made of what validates in ``data``, the problems of the rest, what was dropped.

    Each pass reports what the models refuse and drops it; a problem that only
    follows from an earlier drop (a required key dropped) is not reported again,
    nor one of a value at ``unread`` (a recorded flow's placeholder left as written).
    """
    problems: list[Problem] = []
    dropped = set(dropped)
    for _ in range(_PASSES):
        try:
            return Flow.model_validate(data), problems, dropped
        except ValidationError as error:
            if error.error_count() > MAX_PROBLEMS:  # read as far as they are listed; no more
                findings = translate(error, Flow, positions, file, hints, MAX_PROBLEMS)
                listed = [*problems, *(f.problem for f in findings)][:MAX_PROBLEMS]
                last = listed[-1]
                note = (
                    f"more problems follow; the first {MAX_PROBLEMS:,} are listed, fix these first"
                )
                return None, [*listed, Problem(file, last.line, last.col, note)], dropped
            findings = translate(error, Flow, positions, file, hints)
        consequences = around(dropped)
        problems += [
            f.problem for f in findings if f.path not in consequences and f.path not in unread
        ]
        wrong = {f.path for f in findings}
        data = without(data, wrong)
        dropped |= wrong
    return None, problems, dropped


def around(paths: Iterable[Path]) -> set[Path]:
    """``paths`` and every path that holds one of them."""
    return {path[:end] for path in paths for end in range(len(path) + 1)}


def without(data: dict[str, Any], paths: Iterable[Path]) -> dict[str, Any]:
    """``data`` without the values at ``paths``, copied once however many paths there are.

    A path to a missing key drops the mapping that misses it; a list item drops
    the whole list (its other items keep their places for the messages); a
    wrong or missing version is taken as 1, so the rest can still be checked.
    """
    removals: dict[Any, Any] = {}  # a tree of keys; None marks a value to drop
    version = False
    for path in paths:
        if path[:1] == ("roost",):
            version = True
            continue
        target = _target(data, path)
        if target is None:
            continue
        node = removals
        for key in target[:-1]:
            child = node.setdefault(key, {})
            if child is None:
                break  # a value holding this one is dropped already
            node = child
        else:
            node[target[-1]] = None
    result = _rebuilt(data, removals) if removals else data
    return {**result, "roost": 1} if version else result


_GONE = object()


def _target(data: Any, path: Path) -> Path | None:
    """The path of the value to drop for a problem at ``path`` (see ``without``)."""
    node = data
    for key in path[:-1]:
        node = _child(node, key)
        if node is _GONE:
            return None  # a value holding it is missing: nothing more to drop
    if not path:
        return None
    if isinstance(node, dict) and path[-1] in node:
        return path
    # A list item: the whole list (the places of the other items stay right); a
    # missing key: the mapping that misses it. Either may itself be a list item.
    return _target(data, path[:-1])


def _child(parent: Any, key: str | int) -> Any:
    if isinstance(parent, dict):
        return parent.get(key, _GONE)
    if isinstance(parent, list) and isinstance(key, int) and 0 <= key < len(parent):
        return parent[key]
    return _GONE


def _rebuilt(value: Any, removals: dict[Any, Any]) -> Any:
    """``value`` copied along ``removals``, without the values it marks with None."""
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            below = removals.get(key, _GONE)
            if below is None:
                continue
            kept[key] = item if below is _GONE else _rebuilt(item, below)
        return kept
    if isinstance(value, list):  # passed through to a mapping inside an item
        return [
            _rebuilt(item, removals[index]) if removals.get(index) else item
            for index, item in enumerate(value)
        ]
    return value
