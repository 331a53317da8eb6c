"""``read_flow``: a flow file in, a ``Flow`` valid as language out, or a FlowError.

The language alone: a flow's tools are checked by ``roost.load_flow``, which
starts here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from roost.errors import FlowError, Problem
from roost.flow.checks import Checker, check_flow
from roost.flow.envsubst import substitute
from roost.flow.graph import check_graph
from roost.flow.models import Flow
from roost.flow.positions import Positions
from roost.flow.redact import clean
from roost.flow.schema_errors import translate
from roost.flow.yamlread import build, compose, read_source


def read_flow(path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None) -> Flow:
    """Reads, substitutes and validates the flow file at ``path`` as language (tools unchecked)."""
    file = os.fspath(path)
    return load_flow_text(read_source(file), file, environ=environ)


def load_flow_text(text: str, path: str, *, environ: Mapping[str, str] | None = None) -> Flow:
    """Validates ``text`` as the flow file ``path`` (used in messages and for relative files).

    ``environ`` defaults to ``os.environ``. Warnings are on ``flow.warnings``;
    any error raises ``FlowError`` holding every problem, warnings included.
    """
    file = str(path)
    data, positions = build(compose(text, file), file)
    data, found = substitute(data, positions, file, os.environ if environ is None else environ)
    secrets = frozenset(found.secrets)
    if found.problems:
        raise FlowError(_sorted(found.problems))
    if "name" not in data:  # the contract requires only the version: name it after its file
        data = {**data, "name": Path(file).stem or "flow"}
    flow = _validate(data, positions, file, secrets)
    flow._path = file
    flow._text = text
    flow._secrets = secrets
    flow._positions = dict(positions.keys)
    checker = Checker(flow, positions)
    check_flow(checker)
    check_graph(checker)
    problems = _sorted(checker.problems)
    if any(p.severity == "error" for p in problems):
        raise FlowError(problems)
    flow._warnings = tuple(problems)
    return flow


def _validate(
    data: dict[str, Any], positions: Positions, file: str, secrets: frozenset[str]
) -> Flow:
    try:
        return Flow.model_validate(data)
    except ValidationError as error:
        problems = translate(error, Flow, positions, file)
        masked = [
            Problem(p.file, p.line, p.col, clean(p.message, secrets), p.severity) for p in problems
        ]
        raise FlowError(masked) from None


def _sorted(problems: list[Problem]) -> list[Problem]:
    unique = {(p.line, p.col, p.severity, p.message): p for p in problems}
    return sorted(unique.values(), key=lambda p: (p.line, p.col))
