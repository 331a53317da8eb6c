"""Checks of conditional routes and structured replies (``reply_format``).

Each finding is one located problem: a ``reply_format`` that is no JSON
Schema; a route to something that is neither a member nor ``TERMINATE``; a
``field`` the speaker's ``reply_format`` does not have (nested paths too); an
``equals`` or ``in`` value outside that field's ``enum``; a regular
expression that does not compile; a ``field`` test with no operator or with
several; and, as a warning, a member whose routes can never hold while it has
no plain successor (the run would end after it speaks). Whether a ``python``
condition imports is checked with the flow's tools (it needs an import).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from roost.flow.models import (
    ROUTE_END,
    AllCondition,
    AnyCondition,
    Channel,
    Condition,
    ContainsCondition,
    FieldCondition,
    MatchesCondition,
    NotCondition,
    PythonCondition,
    Route,
    plain_successors,
    routes_in,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sized

    from roost.errors import Severity
    from roost.flow.describe import Hints
    from roost.flow.models import Flow
    from roost.flow.positions import Path


class Checker(Protocol):
    """What the route checks use of the flow checks' ``Checker`` (``roost.flow.checks``),
    which calls them: a protocol, so that neither module imports the other."""

    @property
    def flow(self) -> Flow: ...
    @property
    def hints(self) -> Hints: ...
    @property
    def problems(self) -> Sized: ...

    def at_key(self, path: Path, message: str, severity: Severity = "error") -> None: ...
    def at_value(self, path: Path, message: str, severity: Severity = "error") -> None: ...
    def was_dropped(self, path: Path) -> bool: ...


_OPERATORS = ("equals", "in", "matches", "gt", "lt")


def check_reply_formats(c: Checker) -> None:
    """Every agent's ``reply_format`` is a valid JSON Schema."""
    for name, agent in c.flow.agents.items():
        if agent.reply_format is None:
            continue
        # Imported here: jsonschema costs a tenth of a second, and most flows have no format.
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        try:
            Draft202012Validator.check_schema(agent.reply_format)
        except SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "its top"
            c.at_key(
                ("agents", name, "reply_format"),
                f"reply_format of agent {name!r} is not a valid JSON Schema "
                f"(at {where}): {exc.message}",
            )


def check_routes(c: Checker, name: str, channel: Channel) -> None:
    """The routes of ``channel``'s transitions: targets, fields, values, regexes, reachability."""
    members = set(channel.members)
    for speaker, successors in (channel.transitions or {}).items():
        routes = routes_in(successors)
        if not routes or speaker not in members:
            continue
        base: Path = ("channels", name, "transitions", speaker)
        schema = _schema_of(c, speaker)
        before = len(c.problems)
        for index, successor in enumerate(successors):
            if isinstance(successor, Route):
                _route(c, name, members, (*base, index), successor, schema)
        if len(c.problems) == before:
            _reachable(c, name, channel, speaker, successors, schema)


def _schema_of(c: Checker, agent: str) -> dict[str, Any] | None:
    config = c.flow.agents.get(agent)
    return config.reply_format if config is not None else None


def _route(
    c: Checker,
    channel: str,
    members: set[str],
    path: Path,
    route: Route,
    schema: dict[str, Any] | None,
) -> None:
    if route.to != ROUTE_END and route.to not in members:
        hint = c.hints(route.to, members)
        c.at_value(
            (*path, "to"),
            f"route to {route.to!r} in channel {channel!r}: {route.to!r} is not a member "
            f"(write a member or TERMINATE){hint}",
        )
    if route.when is not None:
        for where, condition in walk_conditions(route.when, (*path, "when")):
            _condition(c, where, condition, path[3], schema)


def walk_conditions(condition: Condition, path: Path) -> Iterator[tuple[Path, Condition]]:
    """Each condition inside ``condition`` (itself first), with its path in the file."""
    yield path, condition
    if isinstance(condition, AllCondition | AnyCondition):
        key = "all" if isinstance(condition, AllCondition) else "any"
        items = condition.all if isinstance(condition, AllCondition) else condition.any
        for index, item in enumerate(items):
            yield from walk_conditions(item, (*path, key, index))
    elif isinstance(condition, NotCondition):
        yield from walk_conditions(condition.not_, (*path, "not"))


def _condition(
    c: Checker, path: Path, condition: Condition, speaker: str | int, schema: dict[str, Any] | None
) -> None:
    if isinstance(condition, MatchesCondition):
        _regex(c, (*path, "matches"), condition.matches)
    elif isinstance(condition, FieldCondition):
        _field(c, path, condition, str(speaker), schema)


def _regex(c: Checker, path: Path, pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        c.at_value(path, f"the regular expression {pattern!r} does not compile: {exc}")


def _field(
    c: Checker, path: Path, condition: FieldCondition, speaker: str, schema: dict[str, Any] | None
) -> None:
    operators = condition.operators()
    if not operators and any(c.was_dropped((*path, k)) for k in _OPERATORS):
        return  # its operator was written wrong, and reported so
    if len(operators) != 1:
        said = "none" if not operators else ", ".join(operators)
        c.at_key(path, f"a field test needs one of equals, in, matches, gt or lt (found {said})")
        return
    if condition.matches is not None:
        _regex(c, (*path, "matches"), condition.matches)
    if schema is None:
        c.at_value(
            (*path, "field"),
            f"field {condition.field!r}: agent {speaker!r} has no reply_format, "
            "so its replies have no data",
        )
        return
    found = field_schema(schema, condition.field)
    if found is None:
        c.at_value(
            (*path, "field"),
            f"field {condition.field!r} is not in the reply_format of agent {speaker!r}",
        )
        return
    enum = found.get("enum")
    if isinstance(enum, list):
        _in_enum(c, path, condition, enum)


def _in_enum(c: Checker, path: Path, condition: FieldCondition, enum: list[Any]) -> None:
    if "equals" in condition.model_fields_set and condition.equals not in enum:
        c.at_value(
            (*path, "equals"),
            f"{condition.equals!r} is not one of the values of {condition.field!r}: "
            f"{', '.join(repr(v) for v in enum)}",
        )
    for index, value in enumerate(condition.in_ or ()):
        if value not in enum:
            c.at_value(
                (*path, "in", index),
                f"{value!r} is not one of the values of {condition.field!r}: "
                f"{', '.join(repr(v) for v in enum)}",
            )


def field_schema(schema: dict[str, Any], dotted: str) -> dict[str, Any] | None:
    """The schema of the value at the dotted ``field`` path, None when the schema lacks it."""
    node: Any = schema
    for key in dotted.split("."):
        properties = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(properties, dict) or key not in properties:
            return None
        node = properties[key]
    return node if isinstance(node, dict) else {}


def _reachable(
    c: Checker,
    name: str,
    channel: Channel,
    speaker: str,
    successors: list[str | Route],
    schema: dict[str, Any] | None,
) -> None:
    """Warns when no successor of ``speaker`` can ever follow it: the run would end there."""
    repeat = channel.director.allow_repeat

    def legal(target: str) -> bool:
        return target == ROUTE_END or repeat or target != speaker

    if any(legal(s) for s in plain_successors(successors)):
        return
    for route in routes_in(successors):
        if legal(route.to) and (route.when is None or can_hold(route.when, schema)):
            return
    c.at_key(
        ("channels", name, "transitions", speaker),
        f"member {speaker!r} of channel {name!r}: none of its routes can hold and it has "
        "no plain successor, so the run ends after it speaks",
        "warning",
    )


def can_hold(condition: Condition, schema: dict[str, Any] | None) -> bool:
    """False only when ``condition`` is sure never to hold (a value no enum allows, an
    empty ``in``, a ``not`` of what always holds); True when it may."""
    if isinstance(condition, FieldCondition):
        if schema is None:
            return False
        found = field_schema(schema, condition.field)
        enum = found.get("enum") if found else None
        if condition.in_ is not None:
            return bool(condition.in_) and (
                not isinstance(enum, list) or any(v in enum for v in condition.in_)
            )
        written = "equals" in condition.model_fields_set
        return not (written and isinstance(enum, list) and condition.equals not in enum)
    if isinstance(condition, AllCondition):
        return all(can_hold(item, schema) for item in condition.all)
    if isinstance(condition, AnyCondition):
        return any(can_hold(item, schema) for item in condition.any)
    if isinstance(condition, NotCondition):
        return not isinstance(condition.not_, ContainsCondition) or condition.not_.contains != ""
    return True  # a test of the text, or a python condition: it may hold


def python_conditions(flow: Flow) -> Iterator[tuple[Path, str]]:
    """Every ``python`` condition of the flow's routes, with the path of its key."""
    for name, channel in flow.channels.items():
        for speaker, successors in (channel.transitions or {}).items():
            for index, successor in enumerate(successors):
                if not isinstance(successor, Route) or successor.when is None:
                    continue
                start: Path = ("channels", name, "transitions", speaker, index, "when")
                for where, condition in walk_conditions(successor.when, start):
                    if isinstance(condition, PythonCondition):
                        yield (*where, "python"), condition.python
