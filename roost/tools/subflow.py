"""``flow: other.yaml`` tools: another flow run as a sub-agent.

The tool's arguments become the sub-flow's start: ``message`` is its start
message (the sub-flow's own ``start.content`` when absent), and an argument
named like one of the sub-flow's ``vars`` replaces that variable. The sub-flow
runs to completion or to its first interrupt and its last message is the
tool's result. Running it is the engine's business: the engine hands the
toolbox a ``SubflowRunner`` (``roost.engine.ChildRuns``), which records it as
a child run whose id comes back in ``ToolOutcome.child_run``. A toolbox given
none still lists its sub-flow tools, and answers a call with an error result.

A tool with ``background: true`` asks the runner to ``start_background``
instead: the child run is started and the call answered at once with a task
id; the result reaches the agent later as a message (``roost.engine.background``).
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from roost.errors import FlowError, ToolFailure
from roost.messages import ToolSpec
from roost.tools.arguments import UncheckableSchema, argument_problem, schema_validator
from roost.tools.base import ToolOutcome

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flow.models import Flow, FlowTool

# The engine's tool loop may set this to the id of the tool call being run, so
# that a sub-flow's run names the exact call that started it.
current_tool_call: ContextVar[str | None] = ContextVar("roost_current_tool_call", default=None)


@runtime_checkable
class SubflowRunner(Protocol):
    """Runs a sub-flow for a tool call; implemented by the engine's ``ChildRuns``."""

    async def run_subflow(
        self, flow: Flow, message: str | None, *, tool: str, arguments: dict[str, Any]
    ) -> ToolOutcome:
        """Runs ``flow`` from ``message`` (None: its own start) and returns its last message."""
        ...

    async def start_background(
        self, flow: Flow, message: str | None, *, tool: str, arguments: dict[str, Any]
    ) -> ToolOutcome:
        """Starts ``flow`` as a background task; the outcome names the task and says so."""
        ...


class NoSubflows:
    """The ``SubflowRunner`` of a toolbox the engine gave none: every call is an error result."""

    async def run_subflow(
        self, flow: Flow, message: str | None, *, tool: str, arguments: dict[str, Any]
    ) -> ToolOutcome:
        """Answers that a sub-flow runs only within a run."""
        text = (
            f"the sub-flow tool {tool!r} cannot run here: sub-flows run only as child runs "
            "of a run (give the toolbox a runner, such as roost.engine.ChildRuns)"
        )
        return ToolOutcome(text, is_error=True)

    async def start_background(
        self, flow: Flow, message: str | None, *, tool: str, arguments: dict[str, Any]
    ) -> ToolOutcome:
        """Answers that a sub-flow runs only within a run."""
        return await self.run_subflow(flow, message, tool=tool, arguments=arguments)


class SubflowTool:
    """A flow file as a ``Tool``."""

    def __init__(self, spec: ToolSpec, flow: Flow, config: FlowTool, runner: SubflowRunner) -> None:
        self.spec = spec
        self.direct_output = config.direct_output
        self.approval = config.approval == "always"
        self.timeout = config.timeout
        self.background = config.background
        self._flow = flow
        self._runner = runner
        self._free_form = config.parameters is not None
        # Only a schema of the flow's own design is checked as JSON Schema; the derived
        # one is enforced by the checks of ``call``.
        declared = config.parameters
        self._validator = schema_validator(declared) if declared is not None else None

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        """Runs the sub-flow with these arguments as its start message and variables."""
        if problem := self._schema_problem(arguments):
            return ToolOutcome(problem, is_error=True)
        message = arguments.get("message")
        if message is not None and not isinstance(message, str):
            return ToolOutcome("invalid arguments: message must be a string", is_error=True)
        flow = self._flow
        overrides = {k: v for k, v in arguments.items() if k in flow.vars}
        rest = {k: v for k, v in arguments.items() if k not in overrides and k != "message"}
        if rest and not self._free_form:
            unknown = sorted(rest)[0]
            return ToolOutcome(f"invalid arguments: unexpected {unknown!r}", is_error=True)
        if rest:
            # With parameters of the flow's own design, the other arguments are the message.
            shown = json.dumps(rest, ensure_ascii=False)
            message = shown if message is None else f"{message}\n\n{shown}"
        if overrides:
            flow = flow.model_copy(update={"vars": {**flow.vars, **overrides}})
        if message is None and (flow.start is None or not flow.start.content):
            return ToolOutcome("invalid arguments: missing 'message'", is_error=True)
        run = self._runner.start_background if self.background else self._runner.run_subflow
        return await run(flow, message, tool=self.spec.name, arguments=arguments)

    def _schema_problem(self, arguments: dict[str, Any]) -> str | None:
        """Why ``arguments`` do not fit the declared ``parameters``, if they do not."""
        if self._validator is None:
            return None
        try:
            problem = argument_problem(self._validator, arguments)
        except UncheckableSchema as exc:
            return f"cannot check the arguments: {exc}"
        return f"invalid arguments: {problem}" if problem else None


def subflow_tool(wire: str, config: FlowTool, folder: Path, runner: SubflowRunner) -> SubflowTool:
    """Loads the sub-flow file (relative to the calling flow's folder) and describes it."""
    flow = load_subflow(folder / config.flow)
    parameters = config.parameters or subflow_parameters(flow)
    description = config.description or flow.description or f"Runs the flow {flow.name!r}."
    return SubflowTool(
        ToolSpec(name=wire, description=description, parameters=parameters), flow, config, runner
    )


def subflow_parameters(flow: Flow) -> dict[str, Any]:
    """``message`` (required unless the flow has a start message) and one property per var."""
    properties: dict[str, Any] = {
        "message": {"type": "string", "description": "The sub-flow's start message."}
    }
    for name, value in flow.vars.items():
        prop: dict[str, Any] = {
            "description": f"Replaces the variable {name!r} (default {value!r})."
        }
        if (kind := _json_type(value)) is not None:
            prop["type"] = kind
        properties[name] = prop
    has_start = flow.start is not None and bool(flow.start.content)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if not has_start:
        schema["required"] = ["message"]
    return schema


def load_subflow(path: Path) -> Flow:
    """The flow at ``path``; raises ToolFailure saying why it cannot be used."""
    if not path.is_file():
        raise ToolFailure(f"sub-flow file {path.name!r} does not exist")
    from roost.flow import read_flow

    try:
        return read_flow(path)
    except FlowError as exc:
        first = exc.errors[0] if exc.errors else None
        raise ToolFailure(f"sub-flow {path.name!r} is invalid: {first or exc}") from exc


def _json_type(value: Any) -> str | None:
    for kind, types in (
        ("boolean", (bool,)),
        ("integer", (int,)),
        ("number", (float,)),
        ("string", (str,)),
        ("array", (list, tuple)),
        ("object", (dict,)),
    ):
        if isinstance(value, types):
            return kind
    return None
