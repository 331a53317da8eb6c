"""What ``roost chat``'s session commands say and do: the run to resume, ``/runs``'
list, ``/info``'s lines, ``/memory``'s entries, ``/mcp``'s servers and tools,
``/dump``'s file, and which stored run a chat's log is (to archive or delete it).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from roost.errors import RoostError, ToolFailure, UsageError
from roost.events import Event, LlmCallEvent
from roost.store.jsonl import JsonlLog
from roost.store.sqllog import SqlLog
from roost.store.tee import TeeLog

if TYPE_CHECKING:
    from collections.abc import Iterable

    from roost.flow.models import Flow
    from roost.ports import EventLog, MemoryBank
    from roost.runstate import RunState
    from roost.store.sql import RunInfo, SqlStore


def run_to_resume(store: SqlStore, flow: Flow) -> RunInfo | None:
    """The paused run of ``flow`` (by its name) that was active last, if there is one.

    Archived runs, sub-flow runs (a ``flow:`` tool's, which their parent goes on
    with) and the rows of a batch are not a person's conversation to resume.
    """
    paused = store.runs(flow=flow.name, status="paused", archived=False)
    own = [run for run in paused if run.batch is None and not _started_by_a_tool(run)]
    return max(own, key=lambda run: (run.updated, run.id), default=None)


def _started_by_a_tool(run: RunInfo) -> bool:
    return run.parent is not None and run.fork_at is None


def run_list(runs: Iterable[RunInfo], current: str) -> list[str]:
    """``/runs``: a line (rich markup) for each run, ``*`` before ``current``; archived
    runs other than it are only counted."""
    lines, hidden = [], 0
    for run in runs:
        here = run.id == current
        if run.archived and not here:
            hidden += 1
            continue
        title = f" — {run.title}" if run.title else ""
        shelved = " (archived)" if run.archived else ""
        lines.append(
            f"{'*' if here else ' '} {run.id}  {run.status:<10} {run.messages:>4} "
            f"messages{escape(title)}{shelved}"
        )
    if hidden:
        lines.append(f"[dim]and {hidden} archived (roost runs --all lists them)[/]")
    return lines


def info_lines(flow: Flow, run_id: str, state: RunState, events: list[Event]) -> list[str]:
    """``/info``: the run's status, tokens and cost, models, contexts and budgets."""
    from roost.budget_text import budget_lines
    from roost.cli.console import context_lines, usage_line

    lines = [f"run {run_id} of {flow.name} ({state.status})"]
    lines.append(usage_line(state.usage, events))
    lines += model_lines(flow, events) or ["model: none (people answer for every node)"]
    lines += context_lines(flow, state) or ["context: no agent has spoken yet"]
    return lines + budget_lines(state)


def memory_lines(flow: Flow, bank: MemoryBank | None) -> list[str]:
    """``/memory``: each entry of each memory the flow's agents use, one line each."""
    scopes = dict.fromkeys(flow.memory_scope(agent) for agent in flow.agents)
    lines = []
    for scope in scopes:
        entries = bank.entries(scope) if bank is not None and scope else []
        lines += [f"{scope}: {e.key} ({e.importance:g}): {e.content}" for e in entries]
    return lines


def delete_question(run_id: str, runs: list[RunInfo]) -> str:
    """What ``/delete`` asks before it deletes ``runs`` (``run_id``'s, then its branches)."""
    question = f"delete run {run_id} ({runs[0].messages} messages) and its events"
    if len(runs) > 1:
        others = ", ".join(run.id for run in runs[1:])
        question += f", with the {len(runs) - 1} runs that branch off it ({others})"
    return question


def model_lines(flow: Flow, events: list[Event]) -> list[str]:
    """``model: writer: gpt-4o (provider gpt)`` for each agent a model answers for.

    The model is the one the agent's latest call reported, else its provider's setting.
    """
    latest: dict[str, str] = {}
    for event in events:
        if isinstance(event, LlmCallEvent) and event.purpose is None and event.model:
            latest[event.node] = event.model
    lines = []
    for name in flow.agents:
        provider = flow.provider_of(name)
        config = flow.providers.get(provider) if provider else None
        if provider is None or config is None or flow.interrupt_of(name) == "ALWAYS":
            continue  # a person answers for it
        lines.append(f"model: {name}: {latest.get(name, config.model)} (provider {provider})")
    return lines


def mcp_lines(flow: Flow) -> list[str]:
    """Each MCP server of ``flow`` and its tools, one line each; the servers are started,
    listed and stopped here. A server that fails is one line saying why."""
    if not flow.mcp_servers:
        return ["this flow has no MCP servers (mcp_servers: in the flow)"]
    from roost.flow.models import StdioServer, flow_folder
    from roost.flow.redact import clean
    from roost.tools.mcp_tool import McpHub

    hub = McpHub(dict(flow.mcp_servers), flow_folder(flow))
    lines = []
    try:
        for name, config in flow.mcp_servers.items():
            where = config.command if isinstance(config, StdioServer) else config.url
            try:
                tools = hub.list_tools(name)
            except ToolFailure as failure:  # it names the server and what it runs
                lines.append(clean(str(failure), flow.secrets))
                continue
            count = f"{len(tools)} tool" + ("s" if len(tools) != 1 else "")
            lines.append(clean(f"{name} ({where}): {count}", flow.secrets))
            for tool in tools:
                about = " ".join((tool.description or tool.title or "").split())
                lines.append(clean(f"  {name}#{tool.name}" + (f": {about}" if about else ""), ()))
    finally:
        hub.close()
    return lines


def write_dump(path: Path, events: list[Event], title: str | None) -> None:
    """Writes the run's transcript as Markdown to ``path`` (replacing a file there)."""
    from roost.cli.markdown import transcript_markdown

    if path.is_dir():
        raise UsageError(f"/dump {path}: is a folder; give a file name")
    try:
        path.write_text(transcript_markdown(events, title=title), encoding="utf-8")
    except OSError as error:
        raise UsageError(f"/dump {path}: cannot write: {error.strerror or error}") from None


def stored_id(log: EventLog, store: SqlStore) -> tuple[str, str | None]:
    """The id of the stored run ``log`` writes, and the file it also writes, if any.

    A run that lives only in a JSON Lines file is not the store's (even when the store
    holds another history under its id): archiving and deleting are the store's, and
    a file is its owner's to move or delete.
    """
    logs = _logs_of(log)
    files = [str(file.path) for file in logs if isinstance(file, JsonlLog)]
    file = files[0] if files else None
    where = f"lives only in {file}" if file else "is not in the store"
    if not any(isinstance(stored, SqlLog) for stored in logs):
        raise UsageError(f"run {log.run_id} {where}: only stored runs are archived or deleted")
    try:
        store.run(log.run_id)
    except RoostError:
        raise UsageError(
            f"run {log.run_id} is not stored yet: nothing to archive or delete"
        ) from None
    return log.run_id, file


def _logs_of(log: EventLog) -> list[EventLog]:
    if isinstance(log, TeeLog):
        return [log.primary, *log.copies]
    return [log]
