"""JSON Schema of a Python function's parameters, from its type hints and docstring.

pydantic builds an argument model from the signature (a parameter without a
hint accepts anything; one with a default is optional); the docstring gives
the tool's description (its text before any ``Args:`` section) and each
parameter's description (Google ``Args:`` entries or Sphinx ``:param x:``).
"""

from __future__ import annotations

import inspect
import re
import typing
from dataclasses import dataclass
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from roost.errors import ToolFailure

if typing.TYPE_CHECKING:
    from collections.abc import Callable

_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?):\s*$")
_GOOGLE_ARG = re.compile(r"^\s+(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_ARG_SECTIONS = ("Args", "Arguments", "Parameters")
_SPHINX_ARG = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


class UndescribableParameters(ToolFailure):
    """The function's parameters have a type that pydantic cannot turn into JSON Schema."""


@dataclass(frozen=True, slots=True)
class Signature:
    """What a Python tool accepts: a description, a pydantic model and its JSON Schema."""

    description: str
    model: type[BaseModel]
    schema: dict[str, Any]
    positional: tuple[str, ...]  # positional-only parameters, passed in this order
    # (model field, parameter): fields are p0, p1... aliased to the parameter names, so
    # that parameters called like BaseModel attributes (json, schema, _x) work too.
    fields: tuple[tuple[str, str], ...]


_DESCRIBED: dict[tuple[Callable[..., Any], str], Signature] = {}
MOST_DESCRIBED = 4096  # signatures kept; past that the memo starts again


def describe_function(fn: Callable[..., Any], name: str) -> Signature:
    """Derives the signature of ``fn``; raises ToolFailure when pydantic cannot describe it.

    Each function is described once per process: building its pydantic model
    costs milliseconds, and a server builds the tools of every run it starts.
    """
    try:
        return _DESCRIBED[(fn, name)]
    except (KeyError, TypeError):  # not described yet, or a callable that cannot be a key
        pass
    described = _describe(fn, name)
    try:
        if len(_DESCRIBED) >= MOST_DESCRIBED:
            _DESCRIBED.clear()
        _DESCRIBED[(fn, name)] = described
    except TypeError:
        pass
    return described


def _describe(fn: Callable[..., Any], name: str) -> Signature:
    try:
        signature = inspect.signature(fn)
        hints = typing.get_type_hints(fn)
    except (TypeError, ValueError, NameError) as exc:
        raise ToolFailure(f"cannot read the signature of {name!r}: {exc}") from exc
    summary, arg_docs = parse_docstring(inspect.getdoc(fn) or "")
    fields: dict[str, Any] = {}
    positional: list[str] = []
    extra: typing.Literal["allow", "forbid"] = "forbid"
    for index, param in enumerate(signature.parameters.values()):
        if param.kind is param.VAR_KEYWORD:
            extra = "allow"
            continue
        if param.kind is param.VAR_POSITIONAL:
            continue
        if param.kind is param.POSITIONAL_ONLY:
            positional.append(param.name)
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        described = Field(default, alias=param.name, description=arg_docs.get(param.name))
        fields[f"p{index}"] = (annotation, described)
    model = _build_model(name, fields, extra)
    pairs = tuple((field, info.alias or field) for field, info in model.model_fields.items())
    return Signature(summary, model, _json_schema(model, name), tuple(positional), pairs)


_UNDESCRIBABLE = (
    pydantic.PydanticSchemaGenerationError,
    pydantic.PydanticInvalidForJsonSchema,
    pydantic.PydanticUserError,
    TypeError,
    NameError,
)


def _build_model(name: str, fields: dict[str, Any], extra: str) -> type[BaseModel]:
    config = ConfigDict(extra=extra, arbitrary_types_allowed=False)  # type: ignore[typeddict-item]
    model_name = re.sub(r"\W", "_", name) + "_arguments"
    try:
        return pydantic.create_model(model_name, __config__=config, **fields)
    except _UNDESCRIBABLE as exc:
        params = {info.alias or key: annotation for key, (annotation, info) in fields.items()}
        raise _undescribable(name, params, exc) from exc


def _json_schema(model: type[BaseModel], name: str) -> dict[str, Any]:
    try:
        schema = model.model_json_schema()
    except _UNDESCRIBABLE as exc:
        params = {f.alias or k: f.annotation for k, f in model.model_fields.items()}
        raise _undescribable(name, params, exc) from exc
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    schema.setdefault("properties", {})
    return schema


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary (text before the first section) and each documented parameter's text."""
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for line in doc.splitlines():
        indent = len(line) - len(line.lstrip())
        if (match := _SPHINX_ARG.match(line)) is not None:
            section, current = "sphinx", match.group(1)
            args[current] = match.group(2).strip()
        elif (header := _SECTION.match(line)) is not None:
            section, current, arg_indent = header.group(1), None, None
        elif section is None:
            summary.append(line)
        elif (
            section in _ARG_SECTIONS
            and (arg := _GOOGLE_ARG.match(line))
            and (arg_indent is None or indent <= arg_indent)
        ):
            current, arg_indent = arg.group(1).lstrip("*"), indent
            args[current] = arg.group(2).strip()
        elif current is not None and line.strip() and section in (*_ARG_SECTIONS, "sphinx"):
            args[current] = f"{args[current]} {line.strip()}".strip()
    return "\n".join(summary).strip(), args


def _undescribable(name: str, params: dict[str, Any], exc: Exception) -> UndescribableParameters:
    """Names the first parameter whose type has no JSON Schema, and the type."""
    for param, annotation in params.items():
        try:
            pydantic.TypeAdapter(annotation).json_schema()
        except _UNDESCRIBABLE:
            kind = getattr(annotation, "__name__", None) or repr(annotation)
            return UndescribableParameters(
                f"tool {name!r}: parameter {param!r} has a type that cannot be described "
                f"as JSON Schema ({kind})"
            )
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return UndescribableParameters(f"tool {name!r}: parameters cannot be described: {first}")
