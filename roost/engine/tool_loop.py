"""The tool loop inside one reply (docs/tools.md).

The provider is called with the agent's tools; every call of one answer runs
concurrently, each under its tool's timeout, and the results go back in call
order. Failures of any kind become error results the model sees. After
``max_tool_calls`` rounds one last call offers no tools and says why. A
``direct_output`` tool's result is the reply. A tool needing approval pauses
the run until a person answers; the loop's progress lives in the state (the
turn), so it resumes from the log in any process.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from roost.approval import approval, refusal_text
from roost.context_window import trim_reasoning, trim_result
from roost.engine.background import over_cap
from roost.engine.calls import error_text
from roost.engine.compaction import Asker, Compactor, fixed_chars
from roost.engine.digests import RequestDigest, request_digest
from roost.engine.hooks import Decided, HookRecorder, no_hooks
from roost.engine.recorder import Recorder, build_event
from roost.errors import RoostError
from roost.events import (
    BackgroundEvent,
    InterruptEvent,
    MemoryEntry,
    MemoryEvent,
    ToolCallEvent,
    ToolResultEvent,
    memory_entry,
)
from roost.messages import (
    AssistantMessage,
    ChatMessage,
    ModelRequest,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from roost.nodes.views import LazyMessages
from roost.runstate import Turn

if TYPE_CHECKING:  # roost.tools is imported only by flows that have tools
    from collections.abc import Callable, Sequence

    from roost.engine.budget import BudgetKeeper
    from roost.flow.redact import Redactor
    from roost.nodes.agent import Seen
    from roost.tools.base import Tool


class Said(NamedTuple):
    """A reply's text, and whether the model stopped it at the token limit (``cut``): a cut
    reply is unfinished, so no marker in it ends or pauses the run."""

    text: str
    cut: bool = False


class ToolOutcome(NamedTuple):
    """A call's result as the loop records it (a Tool's own outcome has the same fields)."""

    content: str
    is_error: bool = False
    child_run: str | None = None
    task: str | None = None  # the background task the call started
    spent: dict[str, float] | None = None  # what a sub-flow's child run spent


LIMIT_NOTE = (
    "The tool limit of this reply ({rounds} rounds) is reached: "
    "no more tools can be called. Answer now with what you have."
)
CUT_NOTE = "\n[cut: the first {shown} of {total} characters are shown]"
RAW_ARGUMENTS_SHOWN = 200  # characters of arguments that are not JSON quoted back to the model
STOPPED = "the process running this tool stopped before it finished; it was not retried"
CLOSED = (
    "this conversation has reached its max_rounds: the run ends after this reply, so no "
    "background task can start now"
)


@dataclass(slots=True)
class ReplyJob:
    """One reply to make: who speaks to whom, with which provider, prompt and tools."""

    agent: str
    to: str
    provider: str
    system: str
    seen: Seen
    tools: Sequence[Tool]
    max_rounds: int
    result_limit: int
    refresh: Callable[[], Seen]  # the view again, after compaction changed it
    memory_scope: str | None = None  # the agent's memory, when the flow has one
    plan: bool = False  # approval: plan: a person approves each answer's calls as one
    # background delegation: open background tasks allowed in the run, and the agent's own
    max_background: int = 4
    agent_max_background: int | None = None
    background_closed: bool = False  # the conversation is at its cap: no task may start


class ToolLoop:
    """Runs the reply of an agent, tools included; gives its text, or None when it stopped."""

    def __init__(
        self,
        recorder: Recorder,
        compactor: Compactor,
        redact: Redactor,
        hooks: HookRecorder | None = None,
    ) -> None:
        self.recorder = recorder
        self.compactor = compactor
        self.redact = redact
        self.hooks = hooks or HookRecorder(recorder, no_hooks)
        self.budget: BudgetKeeper | None = None  # the run's budgets, when it has any

    async def run(self, job: ReplyJob) -> Said | None:
        """The reply; None when the run paused for an approval or stopped at an error."""
        tools = job.tools
        by_name = {tool.spec.name: tool for tool in tools} if tools else {}
        specs = tuple(tool.spec for tool in tools) if tools else ()
        state = self.recorder.state
        asker = Asker(
            job.agent, job.to, job.provider, fixed_chars(job.system, specs, job.seen.context)
        )
        seen_seq = -1
        while True:
            turn = self._turn(job.agent)
            if state.next_seq == seen_seq:
                # Defensive: a pass that recorded nothing would be made again forever.
                awaiting = ", ".join(sorted(turn.awaiting)) or "none"
                raise RoostError(
                    f"internal error: the reply of {job.agent} made no progress "
                    f"(tool calls awaited: {awaiting})"
                )
            seen_seq = state.next_seq
            if turn.awaiting:
                outcome = await self._run_round(job, turn, by_name)
                if outcome is _PAUSED:
                    return None
                if isinstance(outcome, str):
                    return Said(outcome)  # a direct tool's result is the reply
                continue
            final = turn.rounds >= job.max_rounds
            offered = () if final else specs

            def build(
                changed: bool, final: bool = final, offered: tuple[Any, ...] = offered
            ) -> tuple[ModelRequest, RequestDigest]:
                if changed:
                    job.seen = job.refresh()
                turn = self._turn(job.agent)
                base = state.views.get((job.agent, job.to))
                trimmed = base.trimmed if base is not None else -1
                tail = self._tail(turn, job.result_limit, trimmed) if turn.messages else []
                if final and turn.rounds:
                    tail.append(UserMessage(content=LIMIT_NOTE.format(rounds=turn.rounds)))
                request = self._request(job, offered, tail)
                return request, request_digest(job.system, offered, job.seen.digest, tail)

            response = await self.compactor.ask(asker, build, keep_calls=not final)
            if response is None:
                return None
            if final or not response.message.tool_calls:
                return Said(response.message.content, response.cut)

    def _turn(self, agent: str) -> Turn:
        turn = self.recorder.state.turn
        return turn if turn.node == agent else _NO_TURN

    def _tail(self, turn: Turn, limit: int, trimmed: int = -1) -> list[ChatMessage]:
        """The reply's tool rounds as the model is shown them: those up to seq ``trimmed``
        as the trim stage left them, each result cut to ``limit`` characters."""
        tail: list[ChatMessage] = []
        for index, message in enumerate(turn.messages):
            if trimmed >= 0 and turn.seqs[index] <= trimmed:
                message = _trimmed(message)
            if isinstance(message, ToolResultMessage) and len(message.content) > limit:
                # The recorded result is masked already; masked again before the cut all
                # the same, so that no cut ever falls inside a secret that shows.
                shown = self._quoted(message.content, limit) + CUT_NOTE.format(
                    shown=limit, total=len(message.content)
                )
                message = message.model_copy(update={"content": shown})
            tail.append(message)
        return tail

    @staticmethod
    def _request(job: ReplyJob, offered: tuple[Any, ...], tail: list[ChatMessage]) -> ModelRequest:
        base = job.seen.messages
        messages: Sequence[ChatMessage] = base
        if tail:
            frozen_tail = tuple(tail)
            messages = LazyMessages(lambda: [*base, *frozen_tail])
        # Built without validation: ``messages`` stays lazy until a provider reads it.
        return build_event(
            ModelRequest,
            {"system": job.system, "messages": messages, "tools": offered, "node": job.agent},
        )

    async def _run_round(self, job: ReplyJob, turn: Turn, by_name: dict[str, Tool]) -> object:
        """Runs the round's calls without a result: _PAUSED, a direct reply, or None."""
        todo = await self._round_calls(job, turn, by_name)
        asked = [c for c in todo if c.id not in turn.refused and c.id not in turn.decisions]
        if self._ask_approval(job, [c for c in asked if c.name in by_name], by_name):
            return _PAUSED
        self._record_calls(job, turn, todo)
        refused = dict(turn.refused)  # by before_tool hooks
        capped = self._over_cap(job, [c for c in todo if c.id not in refused], by_name)
        outcomes = await asyncio.gather(
            *(
                _given(capped[call.id])
                if call.id in capped
                else self._run_call(job, call, by_name, turn.decisions, refused)
                for call in todo
            )
        )
        direct: str | None = None
        for call, (outcome, decided) in zip(todo, outcomes, strict=True):
            self._record_outcome(job, call, outcome, decided)
            tool = by_name.get(call.name)
            if direct is None and tool is not None and tool.direct_output and not outcome.is_error:
                direct = outcome.content
        return direct

    async def _round_calls(
        self, job: ReplyJob, turn: Turn, by_name: dict[str, Tool]
    ) -> list[ToolCall]:
        """The round's calls that have no result yet, as its before_tool hooks left them."""
        # What remains is what the latest answer asked for and has no result yet: its
        # own calls only, so an id a provider reuses from an earlier round is not "done".
        awaiting = turn.awaiting
        todo = [call for call in turn.last_calls() if call.id in awaiting]
        if self.budget is not None:  # the round's calls, before anyone is asked about them
            self.budget.before_tools(job.agent, len(todo))
        runnable = [c for c in todo if c.name in by_name and c.raw_arguments is None]
        await self.hooks.before_tool(job.agent, runnable, turn)
        # The calls as the hooks left them: a refused one is not run, nor shown for approval.
        return [_as_changed(call, turn.changed) for call in todo]

    def _record_calls(self, job: ReplyJob, turn: Turn, todo: list[ToolCall]) -> None:
        """Records the ``tool_call`` of each call about to run (not one a hook refused, nor
        one whose ``tool_call`` the log holds already), then writes them to the log."""
        rec = self.recorder
        for call in todo:
            if call.id not in turn.open_calls and call.id not in turn.refused:
                rec.add(
                    ToolCallEvent,
                    agent=job.agent,
                    id=call.id,
                    name=call.name,
                    arguments=call.arguments,
                )
        rec.flush()

    def _record_outcome(
        self, job: ReplyJob, call: ToolCall, outcome: ToolOutcome, decided: list[Decided]
    ) -> None:
        """Records what ``call`` came to: its after_tool hooks' decisions, its result, the
        background task it started, and the memory it stored."""
        rec = self.recorder
        for decision in decided:
            self.hooks.record(job.agent, "after_tool", decision, call)
        fields: dict[str, Any] = {}
        if outcome.child_run is not None:
            fields["child_run"] = outcome.child_run
        if outcome.spent:
            fields["spent"] = outcome.spent
        rec.add(
            ToolResultEvent,
            agent=job.agent,
            id=call.id,
            name=call.name,
            content=outcome.content,
            is_error=outcome.is_error,
            **fields,
        )
        if outcome.task is not None and outcome.child_run is not None:
            rec.add(
                BackgroundEvent,
                task=outcome.task,
                agent=job.agent,
                to=job.to,
                tool=call.name,
                call=call.id,
                child_run=outcome.child_run,
            )
        if not outcome.is_error:
            self._record_memory(job, call)

    def _ask_approval(self, job: ReplyJob, calls: list[ToolCall], by_name: dict[str, Tool]) -> bool:
        """Records the interrupt that asks a person about ``calls``; False when none needs it.

        In plan mode every call of the answer is shown at once, for one answer; else
        each call of a tool with ``approval: always`` is asked about in turn.
        """
        if job.plan:
            calls = [call for call in calls if call.raw_arguments is None]
        if job.plan and calls:
            shown = tuple({"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls)
            self.recorder.add(
                InterruptEvent, from_=job.agent, to=job.to, reason="tool_plan", tool_calls=shown
            )
            self.recorder.flush()
            return True
        for call in calls:
            if by_name[call.name].approval:
                self.recorder.add(
                    InterruptEvent,
                    from_=job.agent,
                    to=job.to,
                    reason="tool_approval",
                    tool_call={"id": call.id, "name": call.name, "arguments": call.arguments},
                )
                self.recorder.flush()
                return True
        return False

    async def _run_call(
        self,
        job: ReplyJob,
        call: ToolCall,
        by_name: dict[str, Tool],
        decisions: dict[str, str],
        refused: dict[str, str],
    ) -> tuple[ToolOutcome, list[Decided]]:
        """The call's outcome, after_tool hooks applied, and what those hooks decided."""
        if call.id in refused:
            return ToolOutcome(refused[call.id], is_error=True), []
        tool = by_name.get(call.name)
        outcome = await self._execute(call, tool, decisions, job.plan)
        gated = tool is not None and (tool.approval or job.plan)
        ran = tool is not None and call.raw_arguments is None
        if not ran or (gated and not _approved(decisions.get(call.id, ""))):
            return outcome, []  # the tool did not run: there is nothing for a hook to see
        content, is_error, decided = await self.hooks.after_tool(
            job.agent, call, outcome.content, outcome.is_error
        )
        return outcome._replace(content=content, is_error=is_error), decided

    def _over_cap(
        self, job: ReplyJob, todo: list[ToolCall], by_name: dict[str, Tool]
    ) -> dict[str, ToolOutcome]:
        """The error results of the round's background calls that ``max_background`` refuses.

        Decided in call order before any runs, from the open tasks the log shows and
        those the round's earlier calls start, so the same log refuses the same calls.
        """
        state = self.recorder.state
        refused: dict[str, ToolOutcome] = {}
        starting: list[str] = []  # task ids reserved for this round's accepted calls
        for call in todo:
            tool = by_name.get(call.name)
            if tool is None or not getattr(tool, "background", False):
                continue
            counted = len(state.background) + len(starting)
            own = sum(1 for t in state.background.values() if t.agent == job.agent)
            problem = CLOSED if job.background_closed else over_cap(
                counted, own + len(starting), job.agent, job.max_background,
                job.agent_max_background,
            )  # fmt: skip
            if problem is None:
                starting.append(call.id)
            else:
                refused[call.id] = ToolOutcome(problem, is_error=True)
        return refused

    def _record_memory(self, job: ReplyJob, call: ToolCall) -> None:
        """A successful ``memory#store`` or ``memory#forget``, recorded as a ``memory`` event.

        Made from the call itself, so a replay (whose tools answer from the record)
        records the same events without touching any store.
        """
        scope = job.memory_scope
        if scope is None or not call.name.startswith("memory__"):
            return
        operation = call.name.removeprefix("memory__")
        if operation == "store":
            entry = memory_entry(call.arguments)
        elif operation == "forget":
            entry = MemoryEntry(key=call.arguments["key"])
        else:
            return
        self.recorder.add(
            MemoryEvent, node=job.agent, scope=scope, operation=operation, entry=entry
        )

    async def _execute(
        self, call: ToolCall, tool: Tool | None, decisions: dict[str, str], plan: bool = False
    ) -> ToolOutcome:
        if tool is None:
            return ToolOutcome(f"there is no tool called {call.name!r}", is_error=True)
        if call.raw_arguments is not None:
            quoted = self._quoted(call.raw_arguments, RAW_ARGUMENTS_SHOWN)
            return ToolOutcome(
                f"the arguments of {call.name} are not valid JSON: {quoted}", is_error=True
            )
        if (tool.approval or plan) and not _approved(decisions.get(call.id, "")):
            what = "plan" if plan else "call"
            return ToolOutcome(refusal_text(decisions.get(call.id, ""), what), is_error=True)
        # A sub-flow tool names the call that started it (a context var, so only this task sees it).
        _current_call(call.id)
        try:
            outcome = await asyncio.wait_for(tool.call(call.arguments), timeout=tool.timeout)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            return ToolOutcome(f"{call.name} timed out after {tool.timeout:g} s", is_error=True)
        except Exception as exc:
            return ToolOutcome(self.redact(f"{call.name} failed: {error_text(exc)}"), is_error=True)
        return ToolOutcome(
            outcome.content,
            outcome.is_error,
            outcome.child_run,
            getattr(outcome, "task", None),
            getattr(outcome, "spent", None),
        )

    def _quoted(self, text: str, limit: int) -> str:
        """``text`` fit to quote: the flow's secrets masked first, then cut to ``limit``.

        In that order, as a provider's error is quoted: cut first, a secret straddling
        the cut would leave its first characters, too few to be recognised as it.
        """
        return self.redact(text)[:limit] if self.redact else text[:limit]

    def close_open_calls(self, content: str = STOPPED) -> None:
        """Gives every tool call left without a result (a dead process) an error result."""
        rec = self.recorder
        turn = rec.state.turn
        for call in list(turn.open_calls.values()):
            rec.add(
                ToolResultEvent,
                agent=call.agent,
                id=call.id,
                name=call.name,
                content=content,
                is_error=True,
            )


def _trimmed(
    message: AssistantMessage | ToolResultMessage,
) -> AssistantMessage | ToolResultMessage:
    """A message of an earlier tool round as the ``trim`` stage shows it."""
    if isinstance(message, ToolResultMessage):
        shown = trim_result(message.content)
        return (
            message if shown == message.content else message.model_copy(update={"content": shown})
        )
    reasoning = tuple(trim_reasoning(part) for part in message.reasoning)
    if reasoning == message.reasoning:
        return message
    return message.model_copy(update={"reasoning": reasoning})


def _as_changed(call: ToolCall, changed: dict[str, dict[str, Any]]) -> ToolCall:
    """``call`` with the arguments its before_tool hooks changed it to, if they did."""
    arguments = changed.get(call.id)
    return call if arguments is None else call.model_copy(update={"arguments": arguments})


async def _given(outcome: ToolOutcome) -> tuple[ToolOutcome, list[Decided]]:
    return outcome, []  # refused before it ran: no after_tool hook sees it


def _current_call(call_id: str) -> None:
    subflow = sys.modules.get("roost.tools.subflow")
    if subflow is not None:
        subflow.current_tool_call.set(call_id)


def _approved(answer: str) -> bool:
    return approval(answer).approved


_PAUSED = object()
# The turn of an agent whose reply has not called a tool yet; only ever read.
_NO_TURN = Turn()
