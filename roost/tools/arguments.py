"""Checking a call's arguments against a JSON Schema written by hand (or sent by an MCP server).

A schema is checked once, when its tool is built (``schema_validator``), and
every call's arguments are checked against it (``argument_problem``), so that
arguments the schema refuses never reach the tool and the model is told, on
one line, which argument is wrong and why. Schemas derived from type hints are
pydantic's business instead (see ``python_tool``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jsonschema import exceptions, validators
from referencing import Registry
from referencing.exceptions import Unresolvable

from roost.errors import ToolFailure

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

_MAX_PROBLEMS = 5
_MAX_TEXT = 160


class InvalidSchema(ToolFailure):
    """A tool's ``parameters`` is not a valid JSON Schema."""


class UncheckableSchema(ToolFailure):
    """A valid schema that cannot be applied, e.g. its ``$ref`` names a document not at hand."""


def schema_validator(schema: dict[str, Any]) -> Validator:
    """A validator for ``schema`` (its ``$schema`` draft, else the latest); raises InvalidSchema."""
    kind = validators.validator_for(schema)
    try:
        kind.check_schema(schema)
    except exceptions.SchemaError as exc:
        where = _path(exc.absolute_path)
        raise InvalidSchema(
            f"parameters is not a valid JSON Schema: {where + ': ' if where else ''}{exc.message}"
        ) from None
    # An empty registry: a schema's $ref to a URL must never make roost fetch that URL.
    return kind(schema, registry=Registry())


def argument_problem(validator: Validator, arguments: dict[str, Any]) -> str | None:
    """None when ``arguments`` fit the schema, else one line naming each bad argument.

    Raises UncheckableSchema when the schema cannot be applied at all.
    """
    try:
        errors = list(validator.iter_errors(arguments))
    except Unresolvable as exc:
        raise UncheckableSchema(f"the schema cannot be applied: {exc}") from None
    if not errors:
        return None
    parts = [_describe(error) for error in errors[:_MAX_PROBLEMS]]
    if len(errors) > _MAX_PROBLEMS:
        parts.append(f"and {len(errors) - _MAX_PROBLEMS} more")
    return "; ".join(parts)


def _describe(error: exceptions.ValidationError) -> str:
    """``word: 5 is not of type 'string'``; a problem of the whole object names no path."""
    message = " ".join(error.message.split())
    if len(message) > _MAX_TEXT:
        # jsonschema quotes the whole value first; a long one would hide what is wrong.
        message = f"does not fit {error.validator!r}: {_short(error.validator_value)}"
    where = _path(error.absolute_path)
    return f"{where}: {message}" if where else message


def _path(parts: Any) -> str:
    return ".".join(str(part) for part in parts)


def _short(value: Any) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."
