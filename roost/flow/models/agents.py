"""The ``agents:`` section, and the budgets and memory an agent (or a flow) is given."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from roost.flow.markers import MarkerRule
from roost.flow.models.base import InterruptPolicy, Strict
from roost.flow.models.tools import Hooks

# --------------------------------------------------------------------------- budgets

# What a budget limits, in the order roost checks and shows them.
BUDGET_LIMITS = ("cost", "tokens", "model_calls", "tool_calls", "seconds")


class SwitchTo(Strict):
    switch_to: str = Field(..., description="The provider the rest of the run uses instead.")


class Budget(Strict):
    """Limits on what a run (or one agent) may spend; checked before the money is spent."""

    cost: float | None = Field(
        None, gt=0, description="US dollars, priced by the price table or the providers' price."
    )
    tokens: int | None = Field(None, gt=0, description="Prompt and completion tokens, reported.")
    model_calls: int | None = Field(None, gt=0, description="Model calls.")
    tool_calls: int | None = Field(None, gt=0, description="Tool calls.")
    seconds: float | None = Field(
        None, gt=0, description="The run's own time (its steps), not the time it sat paused."
    )
    on_exhausted: Literal["stop", "ask"] | SwitchTo = Field(
        "stop",
        description="stop: the run ends; ask: a person gives a new limit (or no); "
        "{switch_to: PROVIDER}: the rest of the run uses that provider.",
    )

    @field_validator("cost", "seconds", mode="before")
    @classmethod
    def _a_number(cls, value: Any) -> Any:
        # Strict models take no int for a float; 1 dollar is written 1 as often as 1.0.
        return float(value) if type(value) is int else value

    @field_validator("on_exhausted", mode="before")
    @classmethod
    def _an_action(cls, value: Any) -> Any:
        # One plain message rather than one for each side of the union.
        if value in ("stop", "ask") or isinstance(value, dict):
            return value
        raise PydanticCustomError("on_exhausted", "write stop, ask or {switch_to: PROVIDER}", {})

    def limits(self) -> dict[str, float]:
        """The limits set, by name, in BUDGET_LIMITS order."""
        found = {name: getattr(self, name) for name in BUDGET_LIMITS}
        return {name: float(value) for name, value in found.items() if value is not None}


# --------------------------------------------------------------------------- agents


class Agent(Strict):
    role: str = Field("", description="Jinja2 template; the system prompt.")
    description: str | None = Field(None, description="Shown to directors choosing a speaker.")
    provider: str | None = None
    functions: list[str] = Field(
        default_factory=list, description='Tools: "name", "group#child" or "@@name".'
    )
    interrupt: InterruptPolicy | None = None
    markers: MarkerRule | None = Field(
        None, description="This agent's own rule for TERMINATE and INTERRUPT (defaults.markers)."
    )
    context: list[str] = Field(
        default_factory=list, description="Files (globs) re-read at every reply."
    )
    tool_limit: int | None = Field(None, ge=1, description="Offer only the best-matching N tools.")
    max_tool_calls: int | None = Field(None, ge=0)
    # Only the names are listed in the system prompt: a skill's text costs tokens only once
    # the agent reads it with skill#read.
    skills: list[str] | Literal["all"] = Field(
        default_factory=list,
        description='Skills listed in the system prompt (their names, or "all"); the agent '
        "reads one with the skill#read tool.",
    )

    @field_validator("skills", mode="before")
    @classmethod
    def _skills_are_names_or_all(cls, value: Any) -> Any:
        # One plain message rather than one for each side of the union.
        if value == "all" or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return value
        raise PydanticCustomError("skills", "write a list of skill names, or all", {})

    # The agent's hooks run after the flow's (the flow's rules hold for every agent); plan
    # mode approves or refuses a model answer's tool calls as one.
    hooks: Hooks | None = Field(None, description="Hooks run after the flow's own, in order.")
    approval: Literal["plan"] | None = Field(
        None,
        description="plan: the tool calls of each model answer are shown together and a "
        "person approves or refuses them as one.",
    )
    # background delegation
    max_background: int | None = Field(
        None, ge=1, description="This agent's background sub-flow tasks open at once, at most."
    )
    # routes: a structured reply, parsed into the message's data
    reply_format: dict[str, Any] | None = Field(
        None,
        description="A JSON Schema: the reply is a JSON object following it, kept as the "
        "message's data.",
    )
    # budgets: limits on this agent's own calls
    budget: Budget | None = Field(None, description="Limits on this agent's own spending.")


# --------------------------------------------------------------------------- memory

# A named shared scope: a letter, then letters, digits, ``_``, ``-`` and ``.``.
SHARED_SCOPE = r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$"
MAX_RECALL = 50
# The built-in tools an agent lists as ``memory#NAME``; a tool entry called ``memory`` hides them.
MEMORY_TOOLS = ("store", "recall", "forget", "timeline_recall")


class Memory(Strict):
    """What a flow's agents remember across runs."""

    scope: str = Field(
        "flow",
        description="flow: one memory per flow; agent: one per agent of the flow; any other "
        "name: a memory shared by every flow that names it.",
    )
    recall: int = Field(
        5,
        ge=0,
        le=MAX_RECALL,
        description="Entries matching the latest message added to it before each reply (0: none).",
    )
    timeline: bool = Field(
        False, description="Keep the summaries of compressed conversations as timeline entries."
    )

    @field_validator("scope")
    @classmethod
    def _scope_is_a_name(cls, value: str) -> str:
        if not re.fullmatch(SHARED_SCOPE, value):
            raise PydanticCustomError(
                "memory_scope",
                "unknown scope '{scope}': write flow, agent, or the name of a shared memory "
                "(a letter, then letters, digits, _, - or ., at most 64)",
                {"scope": value},
            )
        return value
