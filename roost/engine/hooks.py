"""Hooks in a run: asking a node's hooks, recording each decision as a ``hook`` event.

The engine asks ``hooks(node, stage)`` for the hooks to run (the flow's, then
the node's own) and records what each decided before acting on it, so the
state, folded from the log, knows every decision: a run paused for approval
or stopped mid-round resumes without asking a hook twice, and a replay
(``roost.engine.recorded.decisions``) answers from the record without running any.

before_tool hooks run one call after another, in the order of the calls, and
each sees the arguments as the hooks before it left them; the first refusal
ends the chain. after_tool hooks run as each call finishes; their events are
recorded in call order, right before the result they shaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from roost.events import HookEvent

if TYPE_CHECKING:
    from roost.engine.recorder import Recorder
    from roost.flow.models import Flow
    from roost.flow.redact import Redactor
    from roost.messages import ToolCall
    from roost.runstate import HistoryEntry, Turn
    from roost.tools.hooks import Decision, Stage


class AskedHook(Protocol):
    """One hook as the engine asks it."""

    name: str

    async def decide(self, stage: Stage, call: dict[str, Any]) -> Decision: ...


HooksFor = Callable[[str, str], Sequence[AskedHook]]
Decided = tuple[str, "Decision"]  # the hook's name and what it decided


def no_hooks(node: str, stage: str) -> Sequence[AskedHook]:
    """The hooks of a flow that has none."""
    return ()


class LiveHooks:
    """``hooks(node, stage)`` running the hooks ``flow`` declares (built on first use)."""

    def __init__(self, flow: Flow, redact: Redactor) -> None:
        self.flow = flow
        self.redact = redact
        self._built: dict[int, AskedHook] = {}

    def __call__(self, node: str, stage: str) -> Sequence[AskedHook]:
        configs = self.flow.hooks_of(node, stage)
        if not configs:
            return ()
        # Imported only now: a flow without hooks never loads the machinery.
        from roost.flow.models import flow_folder
        from roost.tools.hooks import FlowHook

        folder = flow_folder(self.flow)
        hooks: list[AskedHook] = []
        for config in configs:
            key = id(config)
            if key not in self._built:
                self._built[key] = FlowHook(config, folder, self.redact)
            hooks.append(self._built[key])
        return hooks


class HookRecorder:
    """Runs a node's hooks at each stage and records their decisions."""

    def __init__(self, recorder: Recorder, hooks: HooksFor) -> None:
        self.recorder = recorder
        self.hooks = hooks

    async def before_tool(self, agent: str, calls: Sequence[ToolCall], turn: Turn) -> None:
        """Runs the before_tool hooks of each call not yet decided; the turn keeps the
        outcome (``turn.changed``, ``turn.refused``)."""
        hooks = self.hooks(agent, "before_tool")
        if not hooks:
            return
        for call in calls:
            for hook in hooks[turn.hooked.get(call.id, 0) :]:
                if call.id in turn.refused:
                    break
                arguments = turn.changed.get(call.id, call.arguments)
                payload = {
                    "stage": "before_tool",
                    "agent": agent,
                    "tool": call.name,
                    "id": call.id,
                    "arguments": arguments,
                }
                self.recorder.flush()
                decision = await hook.decide("before_tool", payload)
                self.record(agent, "before_tool", (hook.name, decision), call)

    async def after_tool(
        self, agent: str, call: ToolCall, content: str, is_error: bool
    ) -> tuple[str, bool, list[Decided]]:
        """The result (its text, whether an error) as the after_tool hooks leave it, and
        what each decided (to record)."""
        decided: list[Decided] = []
        for hook in self.hooks(agent, "after_tool"):
            payload = {
                "stage": "after_tool",
                "agent": agent,
                "tool": call.name,
                "id": call.id,
                "arguments": call.arguments,
                "result": {"content": content, "is_error": is_error},
            }
            decision = await hook.decide("after_tool", payload)
            decided.append((hook.name, decision))
            if decision.decision == "refuse":
                return decision.reason or "", True, decided
            if decision.decision == "change" and decision.content is not None:
                content = decision.content
        return content, is_error, decided

    async def before_reply(self, agent: str, entry: HistoryEntry) -> str | None:
        """Runs the before_reply hooks on the message ``agent`` answers; the refusal, if any.

        A rewrite is kept in the state, whose views then show the message rewritten.
        """
        hooks = self.hooks(agent, "before_reply")
        if not hooks:
            return None
        state = self.recorder.state
        key = (agent, entry.seq)
        for hook in hooks[state.reply_hooks.get(key, 0) :]:
            if key in state.refusals:
                break
            payload = {
                "stage": "before_reply",
                "agent": agent,
                "from": entry.from_,
                "content": state.rewrites.get(key, entry.content),
            }
            self.recorder.flush()
            decision = await hook.decide("before_reply", payload)
            self.record(agent, "before_reply", (hook.name, decision), message=entry.seq)
        return state.refusals.get(key)

    def record(
        self,
        agent: str,
        stage: str,
        decided: Decided,
        call: ToolCall | None = None,
        message: int | None = None,
    ) -> None:
        """Records one decision as a ``hook`` event."""
        name, decision = decided
        fields: dict[str, Any] = {}
        if call is not None:
            fields["tool_call"], fields["name"] = call.id, call.name
        if message is not None:
            fields["message"] = message
        for field in ("reason", "arguments", "content"):
            value = getattr(decision, field)
            if value is not None:
                fields[field] = value
        self.recorder.add(
            HookEvent, node=agent, stage=stage, hook=name, decision=decision.decision, **fields
        )
