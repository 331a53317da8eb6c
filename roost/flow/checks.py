"""Checks that need the whole flow: names, references, providers, templates, transitions.

Each check reports a located problem and goes on, so that ``roost validate``
shows every finding at once. Graph-wide warnings live in ``roost.flow.graph``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.errors import Problem, Severity
from roost.flow.budget_checks import check_budgets
from roost.flow.context_paths import context_escape
from roost.flow.describe import Hints, did_you_mean, label
from roost.flow.models import Channel, Flow, McpTool, ToolGroup, plain_successors, routes_in
from roost.flow.redact import clean
from roost.flow.route_checks import check_reply_formats, check_routes
from roost.flow.tool_refs import UnresolvedReference, resolve_reference

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from roost.flow.positions import Path, Positions


class Checker:
    """Collects problems about one flow, located with the loader's positions.

    ``dropped`` holds the paths of values left out of the flow because they
    were already reported (a wrong type, say): a name whose entry was dropped
    still exists for the references to it, so they are not reported again.
    """

    def __init__(
        self,
        flow: Flow,
        positions: Positions,
        dropped: set[Path] | None = None,
        hints: Hints | None = None,
    ) -> None:
        self.flow = flow
        self.positions = positions
        self.dropped = dropped or set()
        # Every path that held a dropped value: what was written there, broken or not.
        self._written = {path[:end] for path in self.dropped for end in range(len(path) + 1)}
        self.hints = hints or Hints()
        self.problems: list[Problem] = []
        # Read once: a pydantic private attribute is slow to get, and a file may have
        # thousands of problems.
        self._secrets = flow.secrets
        self._file = flow.path

    def known(self, *path: str) -> bool:
        """Whether the entry at ``path`` (``"agents", "a"``) is in the flow or was dropped."""
        if path in self._written or self.was_dropped(path):
            return True
        section = getattr(self.flow, path[0])
        if len(path) == 2:
            return path[1] in section
        entry = section.get(path[1])  # a group's child: ("tools", group, "tools", child)
        return isinstance(entry, ToolGroup) and path[3] in entry.tools

    def was_dropped(self, path: Path) -> bool:
        """Whether the value at ``path``, something in it or a value holding it was dropped."""
        if not self.dropped:
            return False
        return path in self._written or any(path[:end] in self.dropped for end in range(len(path)))

    def at_key(self, path: Path, message: str, severity: Severity = "error") -> None:
        self._add(self.positions.key(path), message, severity)

    def at_value(self, path: Path, message: str, severity: Severity = "error") -> None:
        self._add(self.positions.value(path), message, severity)

    def _add(self, mark: tuple[int, int], message: str, severity: Severity) -> None:
        # The loader masks and escapes every message it returns: this is for other callers.
        secrets = self._secrets
        text = message if not secrets and message.isprintable() else clean(message, secrets)
        self.problems.append(Problem(self._file, mark[0], mark[1], text, severity))


def check_flow(checker: Checker) -> None:
    """Runs every semantic check of this module."""
    check_names(checker)
    check_providers(checker)
    check_channels(checker)
    check_reply_formats(checker)
    check_start(checker)
    check_tools(checker)
    check_templates(checker)
    check_context(checker)
    check_compression(checker)
    check_start_images(checker)
    check_budgets(checker)


def check_names(c: Checker) -> None:
    """Agent and channel names share one namespace; tool names cannot hold '#' or '@@'."""
    for name in c.flow.channels:
        if name in c.flow.agents:
            c.at_key(
                ("channels", name),
                f"{name!r} is both an agent and a channel; node names must be unique",
            )
    for name, tool in c.flow.tools.items():
        children = list(tool.tools) if isinstance(tool, ToolGroup) else []
        for path, text in [(("tools", name), name)] + [
            (("tools", name, "tools", ch), ch) for ch in children
        ]:
            if "#" in text or text.startswith("@@") or not text.strip():
                c.at_key(
                    path, f"tool name {text!r} may not be empty, contain '#' or start with '@@'"
                )


def check_context(c: Checker) -> None:
    """An agent's context globs stay inside the flow file's folder."""
    for name, agent in c.flow.agents.items():
        for index, pattern in enumerate(agent.context):
            if why := context_escape(pattern):
                message = f"agent {name!r}: context {pattern!r} {why}"
                c.at_value(("agents", name, "context", index), message)


# Characters per token assumed when checking that a system prompt fits its model's window.
_CHARS_PER_TOKEN = 4


def check_compression(c: Checker) -> None:
    """The compression lines are in order; a window holds at least its agents' prompts."""
    flow = c.flow
    defaults = flow.defaults
    if defaults.compress_at > defaults.compress_hard_at and not any(
        c.was_dropped(("defaults", key)) for key in ("compress_at", "compress_hard_at")
    ):
        at = "compress_hard_at" if _written(c, ("defaults", "compress_hard_at")) else "compress_at"
        c.at_value(
            ("defaults", at),
            f"defaults.compress_hard_at ({defaults.compress_hard_at:g}) is below "
            f"defaults.compress_at ({defaults.compress_at:g}); the hard line comes after",
        )
    for name, agent in flow.agents.items():
        provider = flow.provider_of(name)
        config = flow.providers.get(provider) if provider else None
        window = config.context_window if config is not None else None
        needs = len(agent.role) // _CHARS_PER_TOKEN
        if window is not None and needs >= window:
            c.at_value(
                ("providers", str(provider), "context_window"),
                f"context_window {window} of provider {provider!r} is less than what the system "
                f"prompt of agent {name!r} alone needs (about {needs} tokens)",
            )


def _provider_ref(c: Checker, path: Path, name: str | None) -> None:
    if name is not None and not c.known("providers", name):
        hint = c.hints(name, c.flow.providers)
        c.at_value(path, f"no provider named {name!r} under providers{hint}")


def check_providers(c: Checker) -> None:
    """Every provider named exists; agents and llm directors have one to use."""
    flow = c.flow
    _provider_ref(c, ("defaults", "provider"), flow.defaults.provider)
    _provider_ref(c, ("defaults", "summary_provider"), flow.defaults.summary_provider)
    for name, config in flow.providers.items():
        for index, other in enumerate(config.fallback):
            if other == name:
                c.at_value(
                    ("providers", name, "fallback", index),
                    f"provider {name!r} lists itself as a fallback",
                )
            else:
                _provider_ref(c, ("providers", name, "fallback", index), other)
    _fallback_cycles(c)
    # A provider left out because it was wrong is not missing: it was reported.
    has_default = flow.defaults.provider is not None or c.was_dropped(("defaults", "provider"))
    for name, agent in flow.agents.items():
        _provider_ref(c, ("agents", name, "provider"), agent.provider)
        if c.was_dropped(("agents", name, "provider")) or c.was_dropped(
            ("agents", name, "interrupt")
        ):
            continue
        if agent.provider is None and not has_default and flow.interrupt_of(name) != "ALWAYS":
            c.at_key(
                ("agents", name),
                f"agent {name!r} has no provider and defaults.provider is not set "
                "(give it 'provider: NAME', or 'interrupt: ALWAYS' if a person answers)",
            )
    for name, channel in flow.channels.items():
        director = channel.director
        _provider_ref(c, ("channels", name, "director", "provider"), director.provider)
        settled = not any(
            c.was_dropped(("channels", name, "director", key)) for key in ("provider", "strategy")
        ) and not c.was_dropped(("channels", name, "director"))
        if settled and director.strategy == "llm" and director.provider is None and not has_default:
            c.at_key(
                ("channels", name, "director")
                if _written(c, ("channels", name, "director"))
                else ("channels", name),
                f"the llm director of channel {name!r} needs a provider "
                "(set director.provider or defaults.provider, or choose another strategy)",
            )


def _fallback_cycles(c: Checker) -> None:
    """A fallback chain that leads back to where it started would be tried forever."""
    providers = c.flow.providers
    for name, config in providers.items():
        for index, first in enumerate(config.fallback):
            if first == name:
                continue  # reported as a provider listing itself
            route = _route_back(providers, first, name)
            if route is not None:
                loop = " -> ".join([name, *route])
                c.at_value(
                    ("providers", name, "fallback", index),
                    f"the fallbacks of provider {name!r} lead back to it ({loop})",
                )


def _route_back(providers: dict[str, Any], start: str, target: str) -> list[str] | None:
    """The fallback names from ``start`` back to ``target``, if the chain returns to it."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        current, route = stack.pop()
        if current == target:
            return route
        if current in seen or current not in providers:
            continue
        seen.add(current)
        stack.extend((nxt, [*route, nxt]) for nxt in providers[current].fallback)
    return None


def _written(c: Checker, path: Path) -> bool:
    return path in c.positions.keys


def check_channels(c: Checker) -> None:
    """Members are agents, listed once; transitions name members and leave everyone a successor."""
    for name, channel in c.flow.channels.items():
        _members(c, name, channel)
        if len(channel.members) < 2:
            c.at_key(("channels", name), f"channel {name!r} has fewer than two members", "warning")
        if channel.transitions is not None:
            _transitions(c, name, channel)
            check_routes(c, name, channel)


def _members(c: Checker, name: str, channel: Channel) -> None:
    seen: set[str] = set()
    for index, member in enumerate(channel.members):
        path = ("channels", name, "members", index)
        if member in seen:
            c.at_value(path, f"{member!r} is listed twice in the members of channel {name!r}")
        seen.add(member)
        if member in c.flow.channels and member not in c.flow.agents:
            c.at_value(
                path,
                f"channel {member!r} cannot be a member of channel {name!r}; members are agents",
            )
        elif not c.known("agents", member) and not c.known("channels", member):
            hint = c.hints(member, c.flow.agents)
            c.at_value(path, f"member {member!r} of channel {name!r} is not an agent{hint}")


def _transitions(c: Checker, name: str, channel: Channel) -> None:
    members = set(channel.members)
    base: Path = ("channels", name, "transitions")
    for speaker, successors in (channel.transitions or {}).items():
        if speaker not in members:
            hint = c.hints(speaker, members)
            c.at_key(
                (*base, speaker),
                f"transitions of channel {name!r} name {speaker!r}, not a member{hint}",
            )
            continue
        for index, successor in enumerate(successors):
            if isinstance(successor, str) and successor not in members:
                hint = c.hints(successor, members)
                c.at_value(
                    (*base, speaker, index),
                    f"transition {speaker!r} -> {successor!r} in channel {name!r}: "
                    f"{successor!r} is not a member{hint}",
                )
        names = plain_successors(successors)
        if any(s not in members for s in names) or routes_in(successors):
            continue  # reported, or left to the route checks: a warning would only repeat it
        legal = set(names)
        if not channel.director.allow_repeat:
            legal.discard(speaker)
        if not legal:
            why = (
                ""
                if channel.director.allow_repeat or speaker not in successors
                else " (allow_repeat is false)"
            )
            c.at_key(
                (*base, speaker),
                f"member {speaker!r} of channel {name!r} has no legal successor{why}",
            )


def check_start(c: Checker) -> None:
    """The start route goes from a node to a node."""
    start = c.flow.start
    if start is None:
        return
    nodes = [*c.flow.agents, *c.flow.channels]
    for key, name in (("from", start.from_), ("to", start.to)):
        if not c.known("agents", name) and not c.known("channels", name):
            hint = c.hints(name, nodes)
            c.at_value(("start", key), f"start.{key} names no agent or channel: {name!r}{hint}")
    if start.from_ == start.to and c.flow.node_kind(start.to) is not None:
        c.at_value(("start", "to"), f"start goes from {start.to!r} to itself")


# images package: what start.images may name, checked without reading anything.
def check_start_images(c: Checker) -> None:
    """Each of ``start.images`` is a file path or an http(s) URL."""
    start = c.flow.start
    for index, ref in enumerate(start.images if start is not None else ()):
        where = ("start", "images", index)
        if not ref.strip():
            c.at_value(where, f"start.images[{index}] is empty; give a file path or a URL")
        elif "://" in ref and not ref.startswith(("http://", "https://")):
            scheme = ref.split("://", 1)[0]
            c.at_value(
                where,
                f"start.images[{index}]: {scheme}:// is not fetched; give a file path or an "
                "http(s) URL",
            )


def check_tools(c: Checker) -> None:
    """``mcp:`` tools name a server; every agent's functions resolve to a tool."""
    servers = c.flow.mcp_servers
    for name, tool in c.flow.tools.items():
        entries = tool.tools.items() if isinstance(tool, ToolGroup) else [(None, tool)]
        for child, entry in entries:
            if isinstance(entry, McpTool) and not c.known("mcp_servers", entry.mcp):
                path = (
                    ("tools", name, "mcp")
                    if child is None
                    else ("tools", name, "tools", child, "mcp")
                )
                c.at_value(
                    path,
                    f"no MCP server named {entry.mcp!r} under mcp_servers"
                    + c.hints(entry.mcp, servers),
                )
    for agent_name, agent in c.flow.agents.items():
        for index, reference in enumerate(agent.functions):
            if _names_a_dropped_tool(c, reference):
                continue
            message = reference_problem(c.flow, reference, c.hints)
            if message:
                c.at_value(("agents", agent_name, "functions", index), message)


def _names_a_dropped_tool(c: Checker, reference: str) -> bool:
    parent, sep, child = reference.removeprefix("@@").strip().partition("#")
    if c.was_dropped(("tools", parent)) or c.was_dropped(("mcp_servers", parent)):
        return True
    return bool(sep) and c.was_dropped(("tools", parent, "tools", child))


def reference_problem(
    flow: Flow, reference: str, hints: Callable[[str, Iterable[str]], str] = did_you_mean
) -> str | None:
    """None when ``reference`` names a tool of ``flow``, else why it does not.

    What it names is ``resolve_reference``'s answer, as the toolbox builds it at
    run time (an MCP server's tool itself is only known once the server runs);
    ``builtin#http_get`` needs the hosts it may fetch from besides.
    """
    try:
        targets = resolve_reference(flow, reference, hints)
    except UnresolvedReference as error:
        return error.checked
    fetches = any(t.kind == "builtin" and t.tool == "http_get" for t in targets)
    if fetches and not flow.builtins.http.hosts:
        return (
            f"{reference!r} needs the hosts it may fetch from: "
            "builtins: {http: {hosts: [example.com]}}"
        )
    return None


# What the start message may read; roles and channel roles also read the latest message
# their node sees (``last``), and director prompts read more.
START_NAMES = ("vars", "name", "members", "now")
ROLE_NAMES = (*START_NAMES, "last")
PROMPT_NAMES = (*ROLE_NAMES, "channel", "candidates", "conversation")
# What the prompt asking for a summary of older turns reads (defaults.summary_prompt).
SUMMARY_NAMES = ("vars", "name", "words", "summary", "messages", "left_out")


def has_syntax(source: str) -> bool:
    """Whether ``source`` holds any template syntax; text without it renders as itself."""
    return "{{" in source or "{%" in source or "{#" in source


def check_templates(c: Checker) -> None:
    """Roles, director prompts and the start message parse and read only what they are given."""
    for name, agent in c.flow.agents.items():
        _template(c, ("agents", name, "role"), agent.role, ROLE_NAMES)
    for name, channel in c.flow.channels.items():
        _template(c, ("channels", name, "role"), channel.role, ROLE_NAMES)
        prompt = channel.director.prompt
        _template(c, ("channels", name, "director", "prompt"), prompt, PROMPT_NAMES)
    if c.flow.start is not None:
        _template(c, ("start", "content"), c.flow.start.content, START_NAMES)
    prompt = c.flow.defaults.summary_prompt
    _template(c, ("defaults", "summary_prompt"), prompt, SUMMARY_NAMES)


def _template(c: Checker, path: Path, source: str | None, known: tuple[str, ...]) -> None:
    if not source or not has_syntax(source):
        return
    # Jinja2 and the template checks are loaded for the first text that holds syntax.
    from roost.flow.template_checks import template_findings, template_tree
    from roost.templating import TemplateSyntaxProblem

    try:
        tree = template_tree(source)
    except TemplateSyntaxProblem as error:
        _at_template_line(c, path, error.lineno, f"template does not parse: {error.message}")
        return
    for finding in template_findings(tree, known, c.flow.vars, c.hints):
        _at_template_line(c, path, finding.lineno, finding.message)


def _at_template_line(c: Checker, path: Path, lineno: int, message: str) -> None:
    """A problem at line ``lineno`` of the template at ``path``, located in the file."""
    line, col = c.positions.value(path)
    # A block scalar's text starts on the line after its '|' or '>'.
    offset = lineno if path in c.positions.block else lineno - 1
    c._add((line + offset, col if offset == 0 else 1), f"{label(path)}: {message}", "error")
