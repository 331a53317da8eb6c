"""Following a pydantic error location through the flow models.

Pydantic puts the name of a union member into an error's location
(``('tools', 'x', 'PythonTool', 'python')``, or the discriminator value such as
``'openai'``). Walking the model types alongside the location tells those
*tags* apart from real keys, and tells which model a location stands in (for
"did you mean" suggestions).
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo


@dataclass(frozen=True, slots=True)
class Segment:
    """One part of an error location: a key (or index) of the data, or a union tag."""

    value: str | int
    is_tag: bool
    resolved: bool = False  # a tag whose union member has already been chosen


def _unwrap(tp: Any) -> tuple[Any, str | None]:
    """(type without Annotated/None, discriminator name if a discriminated union)."""
    discriminator = None
    while typing.get_origin(tp) is typing.Annotated:
        args = typing.get_args(tp)
        for meta in args[1:]:
            if isinstance(meta, FieldInfo) and isinstance(meta.discriminator, str):
                discriminator = meta.discriminator
        tp = args[0]
    if _is_union(tp):
        members = [m for m in typing.get_args(tp) if m is not type(None)]
        if len(members) == 1:
            return _unwrap(members[0])[0], discriminator
    return tp, discriminator


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def union_members(tp: Any, discriminator: str | None) -> dict[str, Any]:
    """The tags pydantic uses for each member of a union type."""
    tags: dict[str, Any] = {}
    for member in typing.get_args(tp):
        if member is type(None):
            continue
        member, _ = _unwrap(member)
        if discriminator and isinstance(member, type) and issubclass(member, BaseModel):
            annotation = member.model_fields[discriminator].annotation
            for literal in typing.get_args(annotation):
                tags[str(literal)] = member
        elif isinstance(member, type):
            tags[member.__name__] = member
    return tags


@lru_cache(maxsize=1024)
def field_type(model: type[BaseModel], key: str) -> Any:
    """The annotation of ``key`` (name or alias) in ``model``, or None."""
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info.annotation
    return None


def model_keys(model: type[BaseModel]) -> list[str]:
    """The keys a flow writes for ``model`` (aliases where they exist)."""
    return list(_model_keys(model))


@lru_cache(maxsize=256)
def _model_keys(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(info.alias or name for name, info in model.model_fields.items())


def walk(root: Any, loc: tuple[str | int, ...]) -> tuple[list[Segment], Any]:
    """Classifies each part of ``loc`` and returns the type found at its end."""
    segments: list[Segment] = []
    tp: Any = root
    for part in loc:
        # A key of a dict or an index of a list leads to the same type whatever it is,
        # so thousands of errors under ``agents`` share one cached step.
        is_tag, tp = _advance(tp, part if _named(tp) else None)
        segments.append(Segment(part, is_tag))
    return segments, _unwrapped(tp)


@lru_cache(maxsize=1024)
def _named(tp: Any) -> bool:
    """Whether the step from ``tp`` depends on the name taken: a model's field, a union's tag."""
    unwrapped, _ = _unwrap(tp)
    return _is_union(unwrapped) or (
        isinstance(unwrapped, type) and issubclass(unwrapped, BaseModel)
    )


@lru_cache(maxsize=1024)
def _advance(tp: Any, part: str | int | None) -> tuple[bool, Any]:
    """(whether ``part`` is a union tag, the type it leads to) from ``tp``."""
    tp, discriminator = _unwrap(tp)
    if _is_union(tp):
        members = union_members(tp, discriminator)
        if str(part) in members:
            return True, members[str(part)]
    return False, _step(tp, "" if part is None else part)


@lru_cache(maxsize=1024)
def _unwrapped(tp: Any) -> Any:
    return _unwrap(tp)[0]


def _step(tp: Any, part: str | int) -> Any:
    origin = typing.get_origin(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return field_type(tp, str(part))
    if origin is dict:
        return typing.get_args(tp)[1]
    if origin is list:
        return typing.get_args(tp)[0]
    return Any


def describe_type(tp: Any) -> str:
    """What a user should write for ``tp``: "a string", "a mapping", ..."""
    tp, _ = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return "a mapping"
    simple = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
    if tp in simple:
        return simple[tp]
    origin = typing.get_origin(tp)
    if origin is dict:
        return "a mapping"
    if origin is list:
        return "a list"
    if origin is Literal:
        return "one of " + ", ".join(str(v) for v in typing.get_args(tp))
    return "a value of another type"
