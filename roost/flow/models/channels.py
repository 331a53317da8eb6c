"""The ``channels:`` section and ``start:``: who speaks after whom, and on what condition."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from roost.flow.models.base import Strict

# --------------------------------------------------------------------------- routes

# The target of a route that ends the run when it holds.
ROUTE_END = "TERMINATE"
_PYTHON_TARGET = r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"


class ContainsCondition(Strict):
    contains: str = Field(..., description="The reply's text (marker taken off) contains this.")


class EqualsCondition(Strict):
    equals: str = Field(..., description="The reply's text, trimmed, is exactly this.")


class MatchesCondition(Strict):
    matches: str = Field(..., description="A regular expression searched anywhere in the text.")


class FieldCondition(Strict):
    """A test on one value of the reply's structured data (its ``reply_format``)."""

    field: str = Field(..., min_length=1, description="Dotted keys into the reply's data.")
    equals: Any = Field(None, description="The value is exactly this.")
    in_: list[Any] | None = Field(None, alias="in", description="The value is one of these.")
    matches: str | None = Field(None, description="The value, as text, matches this regex.")
    gt: float | None = Field(None, description="The value is a number greater than this.")
    lt: float | None = Field(None, description="The value is a number less than this.")

    def operators(self) -> list[str]:
        """The operators written (one is expected), by their YAML names."""
        written = self.model_fields_set
        names = {"equals": "equals", "in_": "in", "matches": "matches", "gt": "gt", "lt": "lt"}
        return [yaml for attr, yaml in names.items() if attr in written]


class PythonCondition(Strict):
    python: str = Field(
        ...,
        pattern=_PYTHON_TARGET,
        description='"module:function", called with the reply\'s text and data; true or false.',
    )


class AllCondition(Strict):
    all: list[Condition] = Field(..., min_length=1, description="Every one of these holds.")


class AnyCondition(Strict):
    any: list[Condition] = Field(..., min_length=1, description="At least one of these holds.")


class NotCondition(Strict):
    not_: Condition = Field(..., alias="not", description="This does not hold.")


Condition = (
    ContainsCondition
    | EqualsCondition
    | MatchesCondition
    | FieldCondition
    | PythonCondition
    | AllCondition
    | AnyCondition
    | NotCondition
)


class Route(Strict):
    """A conditional successor: ``to`` may speak next when ``when`` holds of the reply."""

    to: str = Field(..., description="A member of the channel, or TERMINATE to end the run.")
    when: Condition | None = Field(None, description="Absent: the route always holds.")


Successor = str | Route


class Director(Strict):
    strategy: Literal["llm", "round_robin", "random", "manual"] = "llm"
    provider: str | None = None
    prompt: str | None = Field(
        None, description="Jinja2 template replacing the built-in selection prompt."
    )
    allow_repeat: bool = False
    seed: int | None = None


class Channel(Strict):
    members: list[str] = Field(..., description="Agents that speak in this channel.")
    max_rounds: int = Field(10, ge=1, description="Member-authored messages into the channel.")
    role: str = Field("", description="The director's system prompt (Jinja2).")
    description: str | None = None
    director: Director = Field(default_factory=Director)
    transitions: dict[str, list[Successor]] | None = Field(
        None,
        description="Who may speak after whom: names, or routes {to, when} taken when their "
        "condition holds of the reply.",
    )


class Start(Strict):
    from_: str = Field(..., alias="from")
    to: str
    content: str = ""
    # images package: pictures sent with the start message.
    images: list[str] = Field(
        default_factory=list,
        description="Images sent with the start message: file paths (relative to the flow's "
        "folder) or http(s) URLs, which roost fetches; PNG, JPEG, GIF or WebP, 5 MB at most.",
    )


AllCondition.model_rebuild()
AnyCondition.model_rebuild()
NotCondition.model_rebuild()
Route.model_rebuild()


def plain_successors(successors: list[Successor]) -> tuple[str, ...]:
    """The names of a transitions entry that are always candidates (its plain names)."""
    return tuple(s for s in successors if isinstance(s, str))


def targets_of(successors: list[Successor]) -> tuple[str, ...]:
    """Every name a transitions entry may lead to: its plain names and its routes' targets."""
    return tuple(s if isinstance(s, str) else s.to for s in successors)


def routes_in(successors: list[Successor]) -> tuple[Route, ...]:
    """The conditional routes of a transitions entry, in order."""
    return tuple(s for s in successors if isinstance(s, Route))
