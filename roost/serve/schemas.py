"""The bodies the API takes and gives, as pydantic models (its OpenAPI schema comes from them).

Request bodies refuse fields they do not know, so a misspelt ``mesage`` is an
error rather than a message silently dropped. Text may not hold NUL
characters: no database column can store them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

Status = Literal["new", "running", "paused", "error", "terminated"]
MESSAGE_LIMIT = 200_000  # characters in one message: a long document, not a flood


def _no_nul(text: str) -> str:
    if "\x00" in text:
        raise ValueError("text may not hold NUL characters (\\u0000)")
    return text


Text = Annotated[str, AfterValidator(_no_nul)]
Message = Annotated[str, Field(max_length=MESSAGE_LIMIT), AfterValidator(_no_nul)]
Name = Annotated[str, Field(min_length=1, max_length=256), AfterValidator(_no_nul)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class StartRun(_Request):
    """Starts a run of a flow in the server's flows folder."""

    flow: Name = Field(description="The flow file's path inside the flows folder.")
    message: Message | None = Field(
        default=None, description="The start message, sent as written (default: the flow's)."
    )
    from_: Name | None = Field(default=None, alias="from", description="Who sends it.")
    to: Name | None = Field(default=None, description="Who receives it.")
    title: Annotated[str, Field(max_length=256), AfterValidator(_no_nul)] | None = Field(
        default=None, description="A title for the run list."
    )
    budget: Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)] | None = Field(
        default=None,
        description="The run's cost limit in US dollars, as `roost run --budget` sets it; "
        "it replaces the flow's own cost limit. Every provider of the flow needs a price.",
    )


class SendMessage(_Request):
    """A person's message, or the answer to what the run waits for."""

    content: Message = Field(description='The text; "" lets the waiting node answer itself.')
    as_: Name | None = Field(
        default=None,
        alias="as",
        description="The node the message speaks as; refused unless the run waits for it.",
    )


class ForkRun(_Request):
    """A new run that shares the first ``at`` events of this one and goes on from there."""

    at: int = Field(ge=1, le=2**53, description="The number of events shared (1: a new start).")
    message: Message | None = Field(
        default=None, description="The new start message, or the answer at an interrupt."
    )


class ValidateFlow(_Request):
    """A flow file in the flows folder to check."""

    flow: Name = Field(description="The flow file's path inside the flows folder.")


class Error(BaseModel):
    """Every error: one line, as the command line prints it, and its kind."""

    error: str
    kind: str
    problems: list[str] | None = None


class FlowInfo(BaseModel):
    path: str
    name: str | None
    description: str | None
    valid: bool
    problems: list[str]


class Validation(BaseModel):
    flow: str
    valid: bool
    problems: list[str] = Field(description="Each problem as FILE:LINE:COL: SEVERITY: MESSAGE.")


class RunRow(BaseModel):
    id: str
    flow: str
    flow_path: str
    title: str | None
    status: str
    messages: int
    tokens: int
    next_seq: int
    parent: str | None
    fork_at: int | None
    created: str
    updated: str


class Waiting(BaseModel):
    node: str = Field(description="Who is asked (the node a message answers as).")
    answering: str
    reason: str = Field(
        description="human, tool_approval (yes or y runs it, no or n refuses, other text "
        "refuses with it as the reason), tool_plan (answer yes to "
        "run them all), manual_select or budget (answer a new limit, or no)"
    )
    tool_call: dict[str, Any] | None
    tool_calls: list[dict[str, Any]] | None = Field(
        None, description="For tool_plan: the calls approved or refused as one."
    )
    choices: list[str] = Field(description="For manual_select: the members that may speak.")
    budget: dict[str, Any] | None = Field(
        None,
        description="For budget: the limit reached (agent, limit, spent, allowed, estimate); "
        "answer with a new limit above what was spent, or no to end the run.",
    )


class BudgetLimit(BaseModel):
    agent: str | None = Field(description="The agent whose budget it is; null: the run's.")
    limit: str = Field(description="cost, tokens, model_calls, tool_calls or seconds.")
    allowed: float
    spent: float
    left: float
    last: str | None = Field(
        description="What it did last: stop, ask, switch_to, raised; null: nothing yet."
    )
    provider: str | None = Field(description="For switch_to: the provider switched to.")


class RunDetail(RunRow):
    pending: dict[str, Any] | None = Field(
        description="The interrupt the run waits at, or the error it stopped at."
    )
    waiting_for: Waiting | None
    terminated_by: str | None
    answer: str | None = Field(
        description="What the run answered: its latest message with text, TERMINATE at its "
        "end taken off."
    )
    usage: dict[str, int]
    cost: float | None = Field(
        description="US dollars its model calls cost (rounded to 9 decimals); null when "
        "none used tokens or one's price is unknown."
    )
    busy: bool = Field(description="A step is running now.")
    queued: int = Field(description="Messages waiting for the run.")
    waiting_on_limits: int = Field(
        description="The run's model calls waiting now for their turn at a provider's limits."
    )
    budget: list[BudgetLimit] = Field(
        description="Each limit of the run's budgets: what it allows, what was spent, what "
        "is left, and what it did last."
    )


class Accepted(BaseModel):
    run: str
    queued: int = Field(description="Messages waiting for the run, this one included.")


class Cancelled(BaseModel):
    run: str
    dropped: int = Field(description="Waiting messages that were dropped.")


class Graph(BaseModel):
    run: str
    svg: str = Field(description="The flow's graph as SVG markup, to place inside a page.")


class FlowGraph(BaseModel):
    flow: str
    svg: str = Field(description="The flow's graph as SVG markup, to place inside a page.")


class Ready(BaseModel):
    status: Literal["ready", "draining"]
    worker: str


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    worker: str
