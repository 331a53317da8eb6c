"""The fold: a run's state as a pure function of its events.

``fold(events)`` builds a ``RunState`` from nothing; ``apply(state, event)``
advances one in place. The live engine keeps its state only by applying each
event it records, so what a process sees while running and what another
process folds from the log are the same thing by construction.

Everything the interpreter asks per turn is kept incrementally here, so no
turn rescans the history: message counts per (from, to), the last sender into
each node, per-node and per-pair lists of history indices, and a digest
chained message by message over each of those lists. Every event type's
handler is here, in ``HANDLERS``: the one place a run's state is changed.
"""

from __future__ import annotations

from bisect import bisect_right
from hashlib import sha256
from typing import TYPE_CHECKING, Any

from roost.context_window import ENTRY_OVERHEAD, IMAGE_CHARS, Calibration, ViewBase, limit_in
from roost.errors import CONTEXT_TOO_LONG
from roost.events import (
    BackgroundEvent,
    BudgetEvent,
    CompactEvent,
    ErrorEvent,
    Event,
    FlowEvent,
    HookEvent,
    InterruptEvent,
    LlmResponse,
    LlmUsage,
    MemoryEvent,
    ResumeEvent,
    RetryEvent,
    RunStartEvent,
    SkillsEvent,
    TerminateEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from roost.messages import (
    AssistantMessage,
    ReasoningPart,
    ToolCall,
    ToolResultMessage,
    Usage,
    distinct_ids,
)
from roost.runstate._history import EMPTY_DIGEST, Thread
from roost.runstate._state import STATUS_AFTER, RunState, Spent, Status, Turn, spent_from

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


def fold(events: Iterable[Event]) -> RunState:
    """The state of a run whose log holds ``events`` (pure: the same events, the same state)."""
    state = RunState()
    for event in events:
        apply(state, event)
    return state


def statuses(events: Iterable[Event]) -> list[Status]:
    """The status after each prefix: ``[fold(events[:n]).status for n in 0..len]``, in one pass."""
    state = RunState()
    found: list[Status] = [state.status]
    for event in events:
        found.append(apply(state, event).status)
    return found


def apply(state: RunState, event: Event) -> RunState:
    """Advances ``state`` by one event, in place, and returns it."""
    kind = event.type
    handler = HANDLERS.get(kind)
    if handler is not None:
        handler(state, event)
    state.status = STATUS_AFTER.get(kind, state.status)
    state.next_seq = event.seq + 1
    if not state.run_id:
        state.run_id = event.run
    return state


def _on_run_start(state: RunState, event: Any) -> None:
    start: RunStartEvent = event
    state.flow_path = start.flow.path
    state.flow_hash = start.flow.hash
    state.flow_text = start.flow.text
    state.memory_at = start.memory_at
    state.running_since = start.ts


def _on_flow(state: RunState, event: Any) -> None:
    # Only the flow in force changes: the history, the status and the turn stay as they are.
    change: FlowEvent = event
    state.flow_path = change.flow.path
    state.flow_hash = change.flow.hash
    state.flow_text = change.flow.text


def _on_message(state: RunState, event: Any) -> None:
    # The busiest handler (once per message), so written for speed: attribute
    # lookups hoisted; each thread chains its digest in Thread.add, as every thread does.
    data = event.__dict__
    frm, to, content = data["from_"], data["to"], data["content"]
    history = state.history
    index = len(history)
    history.append(event)
    key = (frm, to)
    sent = state.sent
    sent[key] = sent.get(key, 0) + 1
    state.last_into[to] = frm
    payload = f"{frm}\x1f{to}\x1f{content}".encode()
    size = len(content) + len(frm) + ENTRY_OVERHEAD  # roost.context_window.entry_size, inlined
    images = data.get("images")
    if images:  # a message's images are part of it: the digests cover them by hash
        payload += "".join(f"\x1fimage\x1f{image.hash}" for image in images).encode()
        size += IMAGE_CHARS * len(images)
    inbox = state.inbox.get(to)
    if inbox is None:
        inbox = state.inbox[to] = Thread()
    inbox.add(index, payload, size)
    pair_key = key if frm <= to else (to, frm)
    pair = state.pairs.get(pair_key)
    if pair is None:
        pair = state.pairs[pair_key] = Thread()
    pair.add(index, payload, size)
    state.pending = None
    state.step = (to, frm)
    state.recall = None
    turn = state.turn
    if turn.node or turn.messages:
        state.turn = Turn()
    delivered = data.get("background")
    if delivered is not None:
        state.background.pop(delivered.task, None)


def _on_interrupt(state: RunState, event: Any) -> None:
    interrupt: InterruptEvent = event
    state.history.append(interrupt)
    state.pending = interrupt
    _stop_clock(state, interrupt.ts)


def _on_error(state: RunState, event: Any) -> None:
    error: ErrorEvent = event
    state.history.append(error)
    state.pending = error
    state.step = (error.from_, error.to)
    _stop_clock(state, error.ts)
    # The turn is kept: a retry goes on with the tool results it already has,
    # rather than running those tools a second time.


def _on_terminate(state: RunState, event: Any) -> None:
    terminate: TerminateEvent = event
    state.pending = None
    state.terminated_by = terminate.node
    state.step = None
    _stop_clock(state, terminate.ts)


def _stop_clock(state: RunState, ts: str) -> None:
    """The step under way ended at ``ts``: its time is the run's own (budgets' seconds)."""
    since = state.running_since
    if since is not None:
        state.running_since = None
        state.seconds += max(elapsed(since, ts), 0.0)


def elapsed(since: str, until: str) -> float:
    """Seconds from one recorded time to another (both as the log writes them)."""
    from datetime import datetime

    try:
        return (datetime.fromisoformat(until) - datetime.fromisoformat(since)).total_seconds()
    except ValueError:  # a log written elsewhere with a time that does not read
        return 0.0


def _on_resume(state: RunState, event: Any) -> None:
    resume: ResumeEvent = event
    pending = state.pending
    if isinstance(pending, InterruptEvent) and pending.reason == "tool_approval":
        call_id = str((pending.tool_call or {}).get("id", ""))
        state.turn.decisions[call_id] = resume.feedback
    elif isinstance(pending, InterruptEvent) and pending.reason == "tool_plan":
        for call in pending.tool_calls or ():  # one answer for the whole plan
            state.turn.decisions[str(call.get("id", ""))] = resume.feedback
    state.pending = None
    state.step = (resume.from_, resume.to)
    state.running_since = resume.ts


def _on_retry(state: RunState, event: Any) -> None:
    retry: RetryEvent = event
    state.pending = None
    state.step = (retry.from_, retry.to)
    state.running_since = retry.ts


def _on_select(state: RunState, event: Any) -> None:
    # Once per message in a channel: read straight from the event's fields.
    data = event.__dict__
    channel = data["channel"]
    selects = state.selects
    selects[channel] = selects.get(channel, 0) + 1
    state.step = (data["chosen"], channel)


def _on_llm_call(state: RunState, event: Any) -> None:
    # Once per model call: the fields are read straight from the event's dictionary.
    data = event.__dict__
    provider = data["provider"]
    attempts = state.provider_attempts
    if data["attempts"]:
        for attempt in data["attempts"]:
            attempts[attempt.provider] = attempts.get(attempt.provider, 0) + 1
    else:
        attempts[provider] = attempts.get(provider, 0) + 1
    if data["error"] is not None:
        _learn_window(state, provider, data["error"], data["attempts"])
    usage = data["usage"]
    spent = state.spent.get(data["node"])
    if spent is None:
        spent = state.spent[data["node"]] = Spent()
    spent.model_calls += len(data["attempts"]) or 1  # a fallback's calls count too
    if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
        state.usage = state.usage + usage_of(usage)
        _spend(state, spent, event, usage)
        if usage.prompt_tokens and data.get("purpose") is None:
            _measured(state, data["node"], provider, usage.prompt_tokens)
    response = data["response"]
    if response is not None and response.tool_calls:
        message = assistant_message(response, provider)
        turn = _turn_for(state, data["node"])
        turn.messages.append(message)
        turn.seqs.append(data["seq"])
        turn.awaiting = {tool_call.id for tool_call in message.tool_calls}


def _spend(state: RunState, spent: Spent, call: Any, usage: LlmUsage) -> None:
    """A call's tokens, kept by what prices them (as ``run_cost`` prices it): the flow in
    force, the provider entry that answered, the model."""
    prompt = usage.prompt_tokens
    spent.tokens += prompt + usage.completion_tokens
    attempts = call.attempts
    answered = attempts[-1].provider if attempts and attempts[-1].outcome == "ok" else None
    key = (state.flow_text, answered or call.provider, call.model)
    counts = spent.priced.get(key)
    if counts is None:
        counts = spent.priced[key] = [0, 0, 0]
    counts[0] += prompt
    counts[1] += usage.completion_tokens
    counts[2] += min(usage.cached_tokens, prompt)  # as cost_of takes a call's


def _learn_window(state: RunState, provider: str, error: str, attempts: Sequence[Any]) -> None:
    """A refusal as too long that names the server's limit: the provider's window from now."""
    if not any(attempt.outcome == CONTEXT_TOO_LONG for attempt in attempts):
        return
    limit = limit_in(error)
    if limit is not None:
        state.windows[provider] = min(limit, state.windows.get(provider, limit))


def _measured(state: RunState, node: str, provider: str, prompt_tokens: int) -> None:
    """A call of ``node`` reported its prompt's size: the anchor of the view's next estimate.

    The view is the one the step in progress shows (the request was built from the
    state as it is now). Its growth since the previous reported call, in characters
    and in tokens, calibrates the provider's characters per token.
    """
    step = state.step
    if step is None or step[0] != node or state.is_channel(node):
        return  # a director's call, or a call outside a step: no view of an agent's
    key = (node, step[1])
    chars = state.view_chars(node, step[1])
    plain = state.turn.node != node or not state.turn.messages
    base = state.views.get(key)
    if base is None:
        base = state.views[key] = ViewBase()
    elif (
        base.reported
        and base.plain
        and plain
        and chars > base.anchor_chars
        and prompt_tokens > base.anchor_tokens
    ):
        calibration = state.calibration.get(provider)
        if calibration is None:
            calibration = state.calibration[provider] = Calibration()
        calibration.add(chars - base.anchor_chars, prompt_tokens - base.anchor_tokens)
    base.anchor_tokens, base.anchor_chars = prompt_tokens, chars
    base.reported, base.plain = True, plain


def _on_tool_call(state: RunState, event: Any) -> None:
    call: ToolCallEvent = event
    _turn_for(state, call.agent).open_calls[call.id] = call
    spent = state.spent.get(call.agent)
    if spent is None:
        spent = state.spent[call.agent] = Spent()
    spent.tool_calls += 1


def _on_tool_result(state: RunState, event: Any) -> None:
    result: ToolResultEvent = event
    if result.spent:  # a sub-flow's spending counts toward the run's
        state.subflows.add(spent_from(result.spent))
    turn = _turn_for(state, result.agent)
    turn.open_calls.pop(result.id, None)
    # A person's approval answers this call only: an id reused in a later round asks again.
    turn.decisions.pop(result.id, None)
    if turn.hooked:  # and so do the hooks' decisions
        turn.hooked.pop(result.id, None)
        turn.changed.pop(result.id, None)
        turn.refused.pop(result.id, None)
    turn.messages.append(
        ToolResultMessage(
            tool_call_id=result.id,
            name=result.name,
            content=result.content,
            is_error=result.is_error,
        )
    )
    turn.seqs.append(result.seq)
    if result.id in turn.awaiting:
        turn.awaiting.discard(result.id)
        if not turn.awaiting:
            turn.rounds += 1


def _on_compact(state: RunState, event: Any) -> None:
    # The view changes, the history does not: the next request shows what the stage left.
    compact: CompactEvent = event
    key = (compact.node, compact.to)
    base = state.views.get(key)
    if base is None:
        base = state.views[key] = ViewBase()
    if compact.stage == "trim":
        base.trimmed = max(base.trimmed, compact.through)
    else:
        history = state.history
        indices = state.conversation(compact.node, compact.to).indices
        base.covered = bisect_right(indices, compact.through, key=lambda i: history[i].seq)
        base.through = compact.through
        base.summary = compact.summary if compact.stage == "summary" else None
    base.stage = compact.stage
    base.anchor_tokens = compact.tokens_after
    base.anchor_chars = state.view_chars(compact.node, compact.to)
    base.reported = False


def _on_memory(state: RunState, event: Any) -> None:
    memory: MemoryEvent = event
    if memory.operation == "recall":  # a recall reads: it changes no memory
        state.recall = memory
    else:
        state.memory_writes.append(memory)


def _on_hook(state: RunState, event: Any) -> None:
    hook: HookEvent = event
    if hook.stage == "before_tool" and hook.tool_call is not None:
        turn = _turn_for(state, hook.node)
        call_id = hook.tool_call
        turn.hooked[call_id] = turn.hooked.get(call_id, 0) + 1
        if hook.decision == "refuse":
            turn.refused[call_id] = hook.reason or ""
        elif hook.decision == "change" and hook.arguments is not None:
            turn.changed[call_id] = hook.arguments
    elif hook.stage == "before_reply" and hook.message is not None:
        key = (hook.node, hook.message)
        state.reply_hooks[key] = state.reply_hooks.get(key, 0) + 1
        if hook.decision == "refuse":
            state.refusals[key] = hook.reason or ""
        elif hook.decision == "change" and hook.content is not None:
            state.rewrites[key] = hook.content
            payload = f"{hook.message}\x1f{hook.content}".encode()
            before = state.rewrite_digests.get(hook.node, EMPTY_DIGEST)
            state.rewrite_digests[hook.node] = sha256(before + payload).digest()
    # after_tool decisions change the result that the tool_result event records.


def _on_background(state: RunState, event: Any) -> None:
    task: BackgroundEvent = event
    state.background[task.task] = task
    state.background_started += 1


def _turn_for(state: RunState, node: str) -> Turn:
    if state.turn.node != node:
        state.turn = Turn(node=node)
    return state.turn


def assistant_message(
    response: LlmResponse, provider: str, *, with_calls: bool = True
) -> AssistantMessage:
    """The answer an ``llm_call`` records, as the message model holds it (validated)."""
    # Ids made distinct here too: a log written elsewhere may repeat one within an answer.
    calls = distinct_ids(
        tuple(
            ToolCall(
                id=call.id,
                name=call.name,
                arguments=call.arguments,
                raw_arguments=call.raw_arguments,
                provider_details=call.provider_details,
            )
            for call in (response.tool_calls if with_calls else ())
        )
    )
    reasoning = tuple(
        ReasoningPart.model_validate(part.model_dump(exclude=set(part.model_extra or ())))
        for part in response.reasoning
    )
    return AssistantMessage(
        content=response.text, tool_calls=calls, reasoning=reasoning, provider=provider
    )


def usage_of(record: LlmUsage) -> Usage:
    """The tokens an ``llm_call`` records, as the message model counts them."""
    return Usage(
        prompt_tokens=record.prompt_tokens,
        completion_tokens=record.completion_tokens,
        cached_tokens=record.cached_tokens,
        reasoning_tokens=record.reasoning_tokens,
        calls=record.calls,
    )


def _on_skills(state: RunState, event: Any) -> None:
    found: SkillsEvent = event
    state.skills = found.skills


def _on_budget(state: RunState, event: Any) -> None:
    budget: BudgetEvent = event
    state.budget_events.append(budget)
    if budget.action == "raised":
        state.raised[(budget.agent, budget.limit)] = budget.allowed
    elif budget.action == "switch_to" and budget.provider is not None:
        state.switched[budget.agent] = budget.provider


HANDLERS: dict[str, Any] = {
    "run_start": _on_run_start,
    "flow": _on_flow,
    "message": _on_message,
    "interrupt": _on_interrupt,
    "error": _on_error,
    "terminate": _on_terminate,
    "resume": _on_resume,
    "retry": _on_retry,
    "select": _on_select,
    "llm_call": _on_llm_call,
    "tool_call": _on_tool_call,
    "tool_result": _on_tool_result,
    "compact": _on_compact,
    "memory": _on_memory,
    "skills": _on_skills,
    "hook": _on_hook,
    "background": _on_background,
    "budget": _on_budget,
}
