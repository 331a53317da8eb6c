"""The flow file itself (``Flow``), its ``defaults:``, and where its relative paths start."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, PrivateAttr, field_validator
from pydantic_core import PydanticCustomError

from roost.errors import Problem, Severity
from roost.flow.markers import MarkerRule
from roost.flow.models.agents import MEMORY_TOOLS, Agent, Budget, Memory
from roost.flow.models.base import InterruptPolicy, Strict
from roost.flow.models.channels import Channel, Start
from roost.flow.models.providers import ProviderConfig
from roost.flow.models.tools import (
    FILE_TOOLS,
    HOOK_STAGES,
    Builtins,
    Hook,
    Hooks,
    McpServerConfig,
    ToolConfig,
)
from roost.flow.redact import clean

if TYPE_CHECKING:
    from collections.abc import Mapping

# --------------------------------------------------------------------------- defaults


class Defaults(Strict):
    provider: str | None = Field(
        None, description="Provider used by agents and directors that name none."
    )
    max_rounds: int = Field(
        100,
        ge=1,
        description="Cap on success messages between two agents (both directions), "
        "and on each member's own messages into a channel.",
    )
    interrupt: InterruptPolicy = Field(
        "NEVER", description="Interrupt policy of agents that set none."
    )
    max_tool_calls: int = Field(10, ge=0, description="Tool rounds per reply.")
    markers: MarkerRule = Field(
        "end",
        description="When a reply says TERMINATE or INTERRUPT: end (the trimmed reply ends "
        "with the word), whole (it is exactly the word) or anywhere (the word appears).",
    )
    timestamps: bool = Field(
        False, description="Start each user message with its event's recorded time."
    )
    tool_result_limit: int = Field(
        16000, ge=1, description="Characters of a tool result shown to a model; the log keeps all."
    )
    compress_at: float = Field(
        0.7,
        gt=0,
        le=1,
        description="Share of a model's context window above which its view of the history "
        "is compressed (trim, then summary).",
    )
    compress_hard_at: float = Field(
        0.9,
        gt=0,
        le=1,
        description="Share of the window above which, after trim and summary, only the first "
        "and the latest turns are kept (cut).",
    )
    summary_provider: str | None = Field(
        None, description="Provider that writes summaries of older turns (default: the node's)."
    )
    summary_prompt: str | None = Field(
        None, description="Jinja2 template replacing the built-in prompt that asks for a summary."
    )
    # background delegation
    max_background: int = Field(
        4, ge=1, description="Background sub-flow tasks of a run open at once, at most."
    )


# --------------------------------------------------------------------------- the file


class Flow(Strict):
    roost: Literal[1] = Field(..., description="Format version.")
    name: str = Field(
        "flow", description="The flow's name (default: the file's name without its extension)."
    )
    description: str | None = None
    vars: dict[str, Any] = Field(
        default_factory=dict, description="Values templates read as {{ vars.NAME }}."
    )
    public_env: list[str] = Field(
        default_factory=list,
        description="Environment variables whose values are not secret: templates may read "
        "them and they are not masked.",
    )
    defaults: Defaults = Field(default_factory=Defaults)
    providers: dict[str, ProviderConfig] = Field(default_factory=dict)
    tools: dict[str, ToolConfig] = Field(default_factory=dict)
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    agents: dict[str, Agent] = Field(default_factory=dict)
    channels: dict[str, Channel] = Field(default_factory=dict)
    start: Start | None = None
    memory: Memory | None = Field(
        None, description="Memory that lasts across runs; memory#... tools need it."
    )
    builtins: Builtins = Field(
        default_factory=Builtins,
        description="Settings of the built-in tools that agents list as builtin#NAME.",
    )
    # Searched after the skills/ folder beside the flow, so a flow's own skills come first.
    skill_paths: list[str] = Field(
        default_factory=list,
        description="Folders of skills (relative to the flow's folder), searched after its "
        "skills/ folder and before the user's.",
    )
    # The flow's hooks hold for every agent, and decide before each agent's own.
    hooks: Hooks | None = Field(None, description="Hooks every agent runs (before its own).")
    # budgets
    budget: Budget | None = Field(
        None, description="Limits on what the whole run spends (sub-flows' calls included)."
    )

    # Where the flow came from; set by the loader, not part of the schema.
    _path: str = PrivateAttr(default="<string>")
    _text: str = PrivateAttr(default="")
    _from_record: bool = PrivateAttr(default=False)  # see ``from_record``

    @field_validator("roost", mode="before")
    @classmethod
    def _version_is_the_integer_one(cls, value: Any) -> Any:
        # true and 1.0 compare equal to 1 in Python; the version is written 1 and nothing else.
        if type(value) is not int:
            raise PydanticCustomError("literal_error", "Input should be 1", {"expected": "1"})
        return value

    _secrets: frozenset[str] = PrivateAttr(default=frozenset())
    # Line and column of every key (by its path of keys and indexes); set by the loader.
    _positions: dict[tuple[str | int, ...], tuple[int, int]] = PrivateAttr(default_factory=dict)
    _warnings: tuple[Problem, ...] = PrivateAttr(default=())
    # What the .env files beside the flow and in the current folder set: kept with the flow so
    # that a provider finds its vendor's key there when the environment has none.
    _env_files: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def path(self) -> str:
        return self._path

    @property
    def from_record(self) -> bool:
        """Loaded from a run's record (``load_recorded_flow``): data from anywhere, which
        decides nothing of the local environment (its context files are read only inside
        the current folder)."""
        return self._from_record

    @property
    def text(self) -> str:
        """The file as written, placeholders unexpanded (recorded in ``run_start``)."""
        return self._text

    @property
    def secrets(self) -> frozenset[str]:
        """Values substituted from the environment, to be kept out of every output."""
        return self._secrets

    @property
    def env_files(self) -> Mapping[str, str]:
        """What the flow's .env files set (secrets: never shown); the environment wins."""
        return self._env_files

    @property
    def warnings(self) -> tuple[Problem, ...]:
        """Findings that do not stop the flow from running (e.g. a channel with one member)."""
        return self._warnings

    def locate(self, *keys: str | int) -> tuple[int, int]:
        """(line, col) of the key at ``keys``, else of its nearest located parent, else (1, 1)."""
        for end in range(len(keys), -1, -1):
            mark = self._positions.get(tuple(keys[:end]))
            if mark is not None:
                return mark
        return (1, 1)

    def problem(
        self, keys: tuple[str | int, ...], message: str, severity: Severity = "error"
    ) -> Problem:
        """A Problem located at ``keys`` in this flow's file, with secrets masked."""
        line, col = self.locate(*keys)
        return Problem(self._path, line, col, clean(message, self._secrets), severity)

    def node_kind(self, name: str) -> Literal["agent", "channel"] | None:
        if name in self.agents:
            return "agent"
        if name in self.channels:
            return "channel"
        return None

    def provider_of(self, node: str) -> str | None:
        """The provider ``node`` speaks through: an agent's own or a channel director's,
        else ``defaults.provider``; None when neither is set."""
        agent = self.agents.get(node)
        own = agent.provider if agent is not None else self.channels[node].director.provider
        return own or self.defaults.provider

    def interrupt_of(self, agent: str) -> InterruptPolicy:
        return self.agents[agent].interrupt or self.defaults.interrupt

    def memory_scope(self, agent: str) -> str | None:
        """The memory ``agent`` reads and writes: ``flow:NAME``, ``agent:NAME/AGENT`` or
        ``shared:SCOPE``; None when the flow has no ``memory:`` section."""
        if self.memory is None:
            return None
        scope = self.memory.scope
        if scope == "flow":
            return f"flow:{self.name}"
        if scope == "agent":
            return f"agent:{self.name}/{agent}"
        return f"shared:{scope}"

    def memory_tool(self, wire_name: str) -> str | None:
        """``store``, ``recall``, ``forget`` or ``timeline_recall`` when ``wire_name`` is that
        built-in memory tool."""
        if self.memory is None or "memory" in self.tools:
            return None
        name = wire_name.removeprefix("memory__")
        return name if name != wire_name and name in MEMORY_TOOLS else None

    def hook_entries(self) -> list[tuple[tuple[str | int, ...], Hook]]:
        """Every hook of the flow and of its agents, with the keys where it is written."""
        found: list[tuple[tuple[str | int, ...], Hook]] = []
        places: list[tuple[tuple[str, ...], Hooks | None]] = [(("hooks",), self.hooks)]
        places += [(("agents", name, "hooks"), agent.hooks) for name, agent in self.agents.items()]
        for keys, hooks in places:
            for stage in HOOK_STAGES if hooks is not None else ():
                for index, hook in enumerate(getattr(hooks, stage)):
                    found.append(((*keys, stage, index), hook))
        return found

    def hooks_of(self, agent: str, stage: str) -> list[Hook]:
        """The hooks ``agent`` runs at ``stage``: the flow's, then the agent's own."""
        config = self.agents.get(agent)
        found: list[Hook] = []
        for hooks in (self.hooks, config.hooks if config else None):
            if hooks is not None:
                found += getattr(hooks, stage)
        return found

    def markers_of(self, agent: str) -> MarkerRule:
        """How ``agent``'s replies are read for TERMINATE and INTERRUPT."""
        return self.agents[agent].markers or self.defaults.markers


def lists_file_tools(flow: Flow) -> bool:
    """True when an agent of ``flow`` lists a built-in file tool (not hidden by a tool entry)."""
    if "builtin" in flow.tools:
        return False
    return any(
        reference.removeprefix("@@").strip() in FILE_TOOLS
        for agent in flow.agents.values()
        for reference in agent.functions
    )


def flow_file(flow: Flow) -> Path | None:
    """The file ``flow`` was read from; None for a flow given as text (a path like ``<string>``)."""
    path = flow.path
    return Path(path) if path and not path.startswith("<") else None


def flow_folder(flow: Flow) -> Path:
    """The folder the relative paths of ``flow`` start from: its file's, else the current one.

    As written, not resolved: a tool's or skill's path keeps the form the user gave.
    """
    file = flow_file(flow)
    return file.parent if file is not None else Path()
