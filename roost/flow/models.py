"""Pydantic models of the flow language (docs/flow-language.md).

These models are the single source of the JSON Schema (``roost schema``).
Every model forbids unknown keys. Cross-references (a member naming an agent,
a provider naming a fallback) are checked later by ``roost.flow.validate``,
which knows where each key stands in the file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, field_validator
from pydantic_core import PydanticCustomError

from roost.errors import Problem, Severity
from roost.flow.markers import MarkerRule
from roost.flow.redact import clean

if TYPE_CHECKING:
    from collections.abc import Mapping

InterruptPolicy = Literal["NEVER", "ALWAYS"]


class Strict(BaseModel):
    """Base for every flow model: unknown keys are errors, models are immutable.

    Strict: a YAML value must already have the key's type (true is no number, 2.0
    no count, 0 no boolean); a value that is only a ``${NAME}`` placeholder gets
    the YAML type of what it expands to before validation, so it still fits.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True)


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


# --------------------------------------------------------------------------- providers


class ThinkingConfig(Strict):
    budget_tokens: int = Field(..., ge=1)


class ReasoningConfig(Strict):
    effort: Literal["low", "medium", "high"]


class PriceConfig(Strict):
    """What a model costs, in US dollars per million tokens (overrides roost's table)."""

    input: float = Field(..., ge=0, description="US dollars per million input tokens.")
    cached_input: float | None = Field(
        None, ge=0, description="Per million input tokens read from a cache (default: input)."
    )
    output: float = Field(..., ge=0, description="US dollars per million output tokens.")


class _ModelProvider(Strict):
    model: str = Field(..., description="The model name the API expects.")
    base_url: str | None = Field(None, description="Any compatible server.")
    api_key: str | None = Field(None, description='Usually "${OPENAI_API_KEY}" or similar.')
    max_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0, le=2)
    timeout: float | None = Field(None, gt=0, description="Seconds for one call.")
    max_retries: int | None = Field(None, ge=0)
    stream: bool = True
    fallback: list[str] = Field(
        default_factory=list, description="Providers tried in order when this one fails."
    )
    thinking: ThinkingConfig | None = None
    reasoning: ReasoningConfig | None = None
    context_window: int | None = Field(
        None,
        ge=1,
        description="Tokens the model sees at most; history is compressed to fit "
        "(default: roost's table of known models, else 128000).",
    )
    price: PriceConfig | None = Field(
        None, description="US dollars per million tokens (default: roost's table of known models)."
    )
    max_concurrency: int | None = Field(
        None, ge=1, description="Requests in flight at once, across every run of the process."
    )
    requests_per_minute: int | None = Field(
        None, ge=1, description="Requests sent per minute, across every run of the process."
    )
    tokens_per_minute: int | None = Field(
        None,
        ge=1,
        description="Tokens sent per minute (estimated), across every run of the process.",
    )


class OpenAIProviderConfig(_ModelProvider):
    kind: Literal["openai"]


class OpenAIResponsesProviderConfig(_ModelProvider):
    kind: Literal["openai-responses"]


class AnthropicProviderConfig(_ModelProvider):
    kind: Literal["anthropic"]


class ScriptedToolCall(Strict):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class ScriptedToolCalls(Strict):
    tool_calls: list[ScriptedToolCall] = Field(..., min_length=1)


class ScriptedError(Strict):
    error: str


class ScriptedEcho(Strict):
    echo: Literal["system", "last"]


ScriptedReply = str | ScriptedToolCalls | ScriptedError | ScriptedEcho


class ScriptedProviderConfig(Strict):
    kind: Literal["scripted"]
    model: str = "scripted"
    replies: list[ScriptedReply] = Field(default_factory=list)
    when_exhausted: Literal["error", "repeat_last", "cycle"] = "error"
    fallback: list[str] = Field(default_factory=list)
    # Accepted so that a flow can switch kinds by editing one line; unused by scripted.
    base_url: str | None = None
    api_key: str | None = None
    max_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0, le=2)
    timeout: float | None = Field(None, gt=0)
    max_retries: Literal[0] | None = None
    stream: bool = True
    thinking: ThinkingConfig | None = None
    reasoning: ReasoningConfig | None = None
    context_window: int | None = Field(None, ge=1)
    price: PriceConfig | None = None


ProviderConfig = Annotated[
    OpenAIProviderConfig
    | OpenAIResponsesProviderConfig
    | AnthropicProviderConfig
    | ScriptedProviderConfig,
    Field(discriminator="kind"),
]

# --------------------------------------------------------------------------- tools


class _ToolCommon(Strict):
    description: str | None = None
    parameters: dict[str, Any] | None = Field(
        None, description="JSON Schema of the arguments; derived from type hints when absent."
    )
    direct_output: bool = Field(False, description="The tool's result becomes the reply.")
    approval: Literal["never", "always"] = Field(
        "never", description="always: a human says yes first."
    )
    timeout: float = Field(60, gt=0, description="Seconds.")


class PythonTool(_ToolCommon):
    python: str = Field(
        ..., pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$", description='"module:function"'
    )


class FlowTool(_ToolCommon):
    flow: str = Field(..., description="Path of another flow, run as a sub-agent.")
    # background delegation
    background: bool = Field(
        False,
        description="Start the sub-flow and answer with a task id at once; its result "
        "arrives later as a message to the agent.",
    )


class McpTool(_ToolCommon):
    mcp: str = Field(..., description="Name of a server under mcp_servers.")


class ToolGroup(Strict):
    description: str | None = None
    tools: dict[str, PythonTool | FlowTool | McpTool]


ToolConfig = PythonTool | FlowTool | McpTool | ToolGroup


class StdioServer(Strict):
    command: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(60, gt=0)
    # Named only so a flow may say it; a server started from a command always speaks stdio.
    transport: Literal["stdio"] = Field("stdio", description="stdio: roost starts the command.")


class HttpServer(Strict):
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(60, gt=0)
    # Some servers still speak only the older HTTP+SSE transport, so it is kept beside
    # streamable HTTP.
    transport: Literal["streamable-http", "sse"] = Field(
        "streamable-http",
        description="streamable-http (the url is the MCP endpoint) or sse (the url is the "
        "server's SSE endpoint, often ending in /sse).",
    )


McpServerConfig = StdioServer | HttpServer


# --------------------------------------------------------------------------- hooks (package: hooks)

HOOK_STAGES = ("before_tool", "after_tool", "before_reply")


class _HookCommon(Strict):
    timeout: float = Field(10, gt=0, description="Seconds the hook may take; past them it fails.")


class PythonHook(_HookCommon):
    python: str = Field(
        ...,
        pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$",
        description='"module:function", called with the call as a dict; returns the decision.',
    )


class CommandHook(_HookCommon):
    command: str = Field(..., description="A program given the call as JSON on standard input.")
    args: list[str] = Field(default_factory=list)


Hook = PythonHook | CommandHook


class Hooks(Strict):
    """Code that sees, and may refuse or change, tool calls and incoming messages."""

    before_tool: list[Hook] = Field(
        default_factory=list, description="Before a tool runs: allow, refuse, or change arguments."
    )
    after_tool: list[Hook] = Field(
        default_factory=list, description="After a tool ran: allow, refuse, or change its result."
    )
    before_reply: list[Hook] = Field(
        default_factory=list,
        description="Before an agent answers a message: allow, refuse, or rewrite the message.",
    )


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


# --------------------------------------------------------------------------- nodes


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


# --------------------------------------------------------------------------- builtins
# The settings of the builtin#... tools: what each may read, write, fetch or run.

# The tools an agent lists as ``builtin#NAME``; a tool entry called ``builtin`` hides them.
BUILTIN_TOOLS = ("read_file", "write_file", "list_files", "http_get", "shell")
# A host http_get may fetch from: a name or an IPv4 address, ``*.`` for every subdomain.
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
ALLOWED_HOST = rf"^(\*\.)?{_LABEL}(\.{_LABEL})*$"


class BuiltinFiles(Strict):
    """Where builtin#read_file, write_file and list_files work, and how much they move."""

    root: str = Field(
        ".",
        min_length=1,
        description="The folder the file tools may use, relative to the flow's folder; "
        "no path they are given leads out of it.",
    )
    max_bytes: int = Field(
        1_000_000, ge=1, description="Bytes read_file reads and write_file writes at most."
    )
    max_entries: int = Field(1000, ge=1, description="Entries list_files lists at most.")


def _host_name(host: str) -> str:
    if not re.fullmatch(ALLOWED_HOST, host):
        raise PydanticCustomError(
            "builtin_host",
            "'{host}' is no host name: write a name such as example.com or *.example.com, "
            "without scheme, port or path",
            {"host": host},
        )
    return host.lower()


class BuiltinHttp(Strict):
    """What builtin#http_get may fetch."""

    hosts: list[Annotated[str, AfterValidator(_host_name)]] = Field(
        default_factory=list,
        description="Hosts http_get may fetch from (example.com; *.example.com for its "
        "subdomains); http_get needs at least one.",
    )
    max_bytes: int = Field(1_000_000, ge=1, description="Bytes of a response body at most.")
    timeout: float = Field(10, gt=0, description="Seconds for the whole request.")


class BuiltinShell(Strict):
    """How builtin#shell runs a command."""

    approval: Literal["never", "always"] = Field(
        "always", description="always (the default): a person says yes before each command."
    )
    timeout: float = Field(30, gt=0, description="Seconds a command may run; then it is killed.")
    max_output: int = Field(
        16000, ge=1, description="Bytes of a command's output (stdout and stderr) kept at most."
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Environment variables the command gets besides PATH, HOME, LANG and TMPDIR.",
    )


# The built-in tools that work in the root folder, which must exist.
FILE_TOOLS = ("builtin#read_file", "builtin#write_file", "builtin#list_files")


def lists_file_tools(flow: Flow) -> bool:
    """True when an agent of ``flow`` lists a built-in file tool (not hidden by a tool entry)."""
    if "builtin" in flow.tools:
        return False
    return any(
        reference.removeprefix("@@").strip() in FILE_TOOLS
        for agent in flow.agents.values()
        for reference in agent.functions
    )


class Builtins(Strict):
    """Settings of roost's built-in tools, which an agent lists as builtin#NAME."""

    files: BuiltinFiles = Field(default_factory=BuiltinFiles)
    http: BuiltinHttp = Field(default_factory=BuiltinHttp)
    shell: BuiltinShell = Field(default_factory=BuiltinShell)


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
