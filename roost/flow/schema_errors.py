"""Pydantic validation errors as located, readable problems.

A value that matches no member of a union makes pydantic report an error for
every member. Those are collapsed here: the member that fits best (the one
whose own keys are present) is kept; when none stands out, one message says
which keys would make the value one of them.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from roost.errors import Problem
from roost.flow.describe import MAX_NAME, Hints, label, one_of, owner
from roost.flow.typewalk import Segment, describe_type, model_keys, union_members, walk

if typing.TYPE_CHECKING:
    from collections.abc import Iterable

    from roost.flow.positions import Path, Positions

_TYPE_WORDS = {
    "int_type": "expected an integer",
    "int_parsing": "expected an integer",
    "int_from_float": "expected an integer",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "string_type": "expected a string",
    "dict_type": "expected a mapping",
    "model_type": "expected a mapping",
    "model_attributes_type": "expected a mapping",
    "list_type": "expected a list",
}


@dataclass(frozen=True, slots=True)
class _Error:
    segments: tuple[Segment, ...]
    loc: tuple[str | int, ...]  # as pydantic gave it, union tags included
    type: str
    ctx: dict[str, Any]
    msg: str
    input: Any = None

    def first_tag(self) -> int | None:
        return next((i for i, s in enumerate(self.segments) if s.is_tag and not s.resolved), None)

    def keys(self) -> Path:
        return tuple(s.value for s in self.segments if not s.is_tag)


@dataclass(frozen=True, slots=True)
class Finding:
    """A located problem, and the path of the value it is about (dropped to check the rest)."""

    problem: Problem
    path: Path


def translate(
    error: ValidationError,
    model: type[BaseModel],
    positions: Positions,
    file: str,
    hints: Hints | None = None,
    limit: int | None = None,
) -> list[Finding]:
    """One finding per distinct problem of ``error``, located with ``positions``.

    With ``limit``, only the first ``limit`` errors pydantic found are read.
    """
    errors = []
    for item in error.errors(include_url=False)[:limit]:
        segments, _ = walk(model, tuple(item["loc"]))
        # The written value is kept only as text short enough to hint at (a typo of a choice).
        written = item.get("input")
        errors.append(
            _Error(
                tuple(segments),
                tuple(item["loc"]),
                item["type"],
                dict(item.get("ctx") or {}),
                item["msg"],
                written if isinstance(written, str) and len(written) <= MAX_NAME else None,
            )
        )
    report = _Report(model, positions, file, hints or Hints())
    report.resolve(errors)
    unique = {(f.problem.line, f.problem.col, f.problem.message): f for f in report.findings}
    return sorted(unique.values(), key=lambda f: (f.problem.line, f.problem.col))


def _places_of(root: type[BaseModel], key: str, here: Any) -> list[str]:
    """Where ``key`` is a key of its own, among the top-level sections of ``root`` (other
    than ``here``): ``max_rounds`` in an agent belongs to ``defaults:`` or a channel."""
    places = []
    for name, field in root.model_fields.items():
        inner: Any = field.annotation
        mapped = False
        while typing.get_args(inner) and not _is_model(inner):
            args = [a for a in typing.get_args(inner) if a is not type(None)]
            mapped = mapped or typing.get_origin(inner) is dict
            inner = args[-1]
        if not _is_model(inner) or inner is here:
            continue
        if key in inner.model_fields:
            places.append(f"a {name.removesuffix('s')} ({name}:)" if mapped else f"{name}:")
    return places


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


class _Report:
    """Collects the problems of one validation error, union noise collapsed."""

    def __init__(
        self, model: type[BaseModel], positions: Positions, file: str, hints: Hints
    ) -> None:
        self.model = model
        self.positions = positions
        self.file = file
        self.hints = hints
        self.findings: list[Finding] = []

    def add(self, mark: tuple[int, int], message: str, path: Path) -> None:
        self.findings.append(Finding(Problem(self.file, mark[0], mark[1], message), path))

    def resolve(self, errors: list[_Error]) -> None:
        """Reports untagged errors and picks one union member for each union."""
        unions: dict[tuple[Segment, ...], list[_Error]] = {}
        for error in errors:
            tag_at = error.first_tag()
            if tag_at is None:
                self.leaf(error)
            else:
                unions.setdefault(error.segments[:tag_at], []).append(error)
        for prefix, group in unions.items():
            self.union(prefix, group)

    def union(self, prefix: tuple[Segment, ...], group: list[_Error]) -> None:
        depth = len(prefix)
        branches: dict[str | int, list[_Error]] = {}
        for error in group:
            branches.setdefault(error.segments[depth].value, []).append(error)
        scores = {tag: _score(errs, depth + 1) for tag, errs in branches.items()}
        best = min(scores.values())
        tied = [tag for tag, score in scores.items() if score == best]
        if len(tied) == 1 or not self.ambiguous(prefix, {t: branches[t] for t in tied}):
            chosen = branches[tied[0]]
            self.resolve([_resolve_tag(e, depth) for e in chosen])

    def ambiguous(self, prefix: tuple[Segment, ...], tied: dict[str | int, list[_Error]]) -> bool:
        """Reports a value that fits several members equally badly; False if nothing to say."""
        path = tuple(s.value for s in prefix if not s.is_tag)
        depth = len(prefix)
        _, union_type = walk(self.model, tuple(s.value for s in prefix))
        members = union_members(union_type, None)
        if all(any(len(e.segments) == depth + 1 for e in errs) for errs in tied.values()):
            kinds = dict.fromkeys(describe_type(members.get(str(t))) for t in tied)
            self.add(self.positions.value(path), f"{label(path)}: expected {one_of(kinds)}", path)
            return True
        missing = _direct(tied.values(), depth, "missing")
        extras = [set(_direct([errs], depth, "extra_forbidden")) for errs in tied.values()]
        common = set.intersection(*extras)
        allowed = [k for m in members.values() if isinstance(m, type) for k in _keys_of(m)]
        for key in sorted(common):
            hint = self.hints(key, allowed)
            self.add(
                self.positions.key((*path, key)),
                f"unknown key {key!r} in {owner(path)}{hint}",
                (*path, key),
            )
        if missing:
            self.add(
                self.positions.key(path),
                f"{owner(path)} needs one of the keys {one_of(missing)}",
                path,
            )
        elif not common:
            mixed = sorted(set.union(*extras))
            if not mixed:
                return False
            self.add(
                self.positions.key(path),
                f"{owner(path)} can have only one of the keys {one_of(mixed)}",
                path,
            )
        return True

    def leaf(self, error: _Error) -> None:
        path = error.keys()
        key = path[-1] if path else ""
        parent = path[:-1]
        if error.type == "extra_forbidden":
            _, parent_type = walk(self.model, error.loc[:-1])
            places = _places_of(self.model, str(key), parent_type)
            hint = (
                f" ({key!r} belongs in {one_of(places)}, not here)"
                if places
                else self.hints(str(key), _keys_of(parent_type))
            )
            message = f"unknown key {key!r} in {owner(parent)}{hint}"
            self.add(self.positions.key(path), message, path)
        elif error.type == "missing":
            self.missing(parent, str(key))
        elif error.type == "literal_error" and path == ("roost",):
            message = "unsupported format version; write 'roost: 1'"
            self.add(self.positions.value(path), message, path)
        elif error.type == "union_tag_invalid":
            kinds = error.ctx.get("expected_tags", "").replace("'", "")
            hint = self._enum_hint(error, kinds.split(", "))
            self.add(
                self.positions.value((*path, "kind")),
                f"kind of {owner(path)} must be one of {kinds}{hint}",
                path,
            )
        elif error.type == "union_tag_not_found":
            _, union_type = walk(self.model, error.loc)
            tags = ", ".join(union_members(union_type, "kind"))
            self.add(self.positions.key(path), f"{owner(path)} needs a 'kind': one of {tags}", path)
        else:
            final = walk(self.model, error.loc)[1]
            message = f"{label(path)}: {_value_message(error, final)}"
            if error.type == "literal_error" and _is_literal(final):
                message += self._enum_hint(error, [str(v) for v in typing.get_args(final)])
            self.add(self.positions.value(path), message, path)

    def _enum_hint(self, error: _Error, choices: list[str]) -> str:
        """`` (did you mean 'x'?)`` for a text that is close to one of ``choices``."""
        written = error.ctx.get("tag") if error.type == "union_tag_invalid" else error.input
        return self.hints(written, choices) if isinstance(written, str) else ""

    def missing(self, parent: Path, key: str) -> None:
        if not parent and key == "roost":
            message = "missing the format version: add 'roost: 1' at the top"
            self.add(self.positions.value(()), message, (key,))
            return
        mark = self.positions.key(parent) if parent else self.positions.value(())
        self.add(mark, f"{owner(parent)} needs the key {key!r}", (*parent, key))


def _keys_of(tp: Any) -> list[str]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return model_keys(tp)
    return []


def _resolve_tag(error: _Error, index: int) -> _Error:
    tag = Segment(error.segments[index].value, True, resolved=True)
    segments = (*error.segments[:index], tag, *error.segments[index + 1 :])
    return _Error(segments, error.loc, error.type, error.ctx, error.msg, error.input)


def _direct(branches: Iterable[list[_Error]], depth: int, kind: str) -> list[str]:
    """Keys named by ``kind`` errors directly inside the union member (deduplicated, in order)."""
    names: dict[str, None] = {}
    for errs in branches:
        for error in errs:
            if error.type == kind and len(error.segments) == depth + 2:
                names[str(error.segments[-1].value)] = None
    return list(names)


def _score(errors: list[_Error], depth: int) -> tuple[int, int, int]:
    """Lower is a better fit: wrong type outright, then missing keys, then unknown keys."""
    root = sum(1 for e in errors if len(e.segments) == depth)
    missing = sum(1 for e in errors if len(e.segments) == depth + 1 and e.type == "missing")
    extra = sum(1 for e in errors if len(e.segments) == depth + 1 and e.type == "extra_forbidden")
    return root, missing, extra


def _value_message(error: _Error, final: Any) -> str:
    if error.type in _TYPE_WORDS:
        return _TYPE_WORDS[error.type]
    ctx = error.ctx
    if error.type == "literal_error":
        return (
            f"must be {describe_type(final)}"
            if _is_literal(final)
            else f"must be {ctx.get('expected')}"
        )
    bounds = {
        "greater_than_equal": ("at least", "ge"),
        "greater_than": ("greater than", "gt"),
        "less_than_equal": ("at most", "le"),
        "less_than": ("less than", "lt"),
    }
    if error.type in bounds:
        words, key = bounds[error.type]
        return f"must be {words} {ctx.get(key)}"
    if error.type == "string_pattern_mismatch":
        if error.keys()[-1:] == ("python",):
            return 'must be "module:function", e.g. "tools_mod:add"'
        return f"must match the pattern {ctx.get('pattern')}"
    if error.type == "too_short":
        return f"must have at least {ctx.get('min_length')} item(s)"
    return error.msg.removeprefix("Value error, ")


def _is_literal(tp: Any) -> bool:
    return typing.get_origin(tp) is Literal
