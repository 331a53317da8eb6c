"""Budgets kept before the money is spent (docs/budgets.md).

Before each model call (an agent's, a director's, a summary's) the keeper adds
the call's estimate to what the run, and the calling agent, spent so far; a
call that would pass a limit is not made. Before each tool round it counts the
round's calls, and before each step and tool round the run's own time. The
decision is a ``budget`` event, followed by a ``terminate`` (``stop``), an
interrupt from the node ``budget`` (``ask``), or the switch of provider
(``switch_to``), after which the check is made again with that provider.

Everything it reads is the run's state, folded from the log (the spending, the
limits raised, the provider switched to) and the request about to be sent, so a
replay takes the same decisions without a model. A flow without any budget has
no keeper at all: nothing is estimated, nothing recorded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from roost.events import BudgetEvent, InterruptEvent, TerminateEvent
from roost.flow.models import Budget, SwitchTo
from roost.runstate import elapsed

if TYPE_CHECKING:
    from roost.engine.recorder import Recorder
    from roost.flow.models import Flow
    from roost.messages import ModelRequest
    from roost.runstate import RunState, Spent

# The node an ``ask`` interrupt comes from: the budget asks, not an agent.
BUDGET_NODE = "budget"
# Tokens a message costs besides its text, in the estimate of a prompt.
MESSAGE_TOKENS = 4
# The answer's size assumed for a provider without max_tokens, in tokens.
ASSUMED_MAX_TOKENS = 4096
# What a model call adds to; tool calls and time are checked before tool rounds and steps.
_CALL_LIMITS = ("cost", "tokens", "model_calls")
_NO = ("no", "n")
_DEFAULT = Budget()  # what a limit set from outside alone (--budget) does when exhausted


class BudgetHalt(BaseException):
    """The budget stopped the step (the run ended or asks); nothing more is to be done.

    A BaseException so that no handler of a step's own failures records it as one.
    """


@dataclass(frozen=True, slots=True)
class Estimate:
    """What a call could add: its cost (None: price unknown), tokens and one call."""

    cost: float | None
    tokens: int

    def of(self, limit: str) -> float:
        if limit == "cost":
            return self.cost or 0.0
        return float(self.tokens) if limit == "tokens" else 1.0


def has_budget(flow: Flow, state: RunState) -> bool:
    """Whether anything limits this run: the flow's budget, an agent's, a limit set outside."""
    return bool(
        flow.budget is not None
        or state.raised
        or any(agent.budget is not None for agent in flow.agents.values())
    )


class BudgetKeeper:
    """Checks the run's and the agents' budgets before calls, tool rounds and steps."""

    def __init__(self, flow: Flow, recorder: Recorder) -> None:
        self.flow = flow
        self.rec = recorder
        self.state = recorder.state

    # ------------------------------------------------------------------ the scopes

    def _budget(self, scope: str | None) -> Budget | None:
        if scope is None:
            return self.flow.budget
        agent = self.flow.agents.get(scope)
        return agent.budget if agent is not None else None

    def allowed(self, scope: str | None, limit: str) -> float | None:
        """The limit in force: raised (by a person or from outside), else the flow's."""
        raised = self.state.raised.get((scope, limit))
        if raised is not None:
            return raised
        budget = self._budget(scope)
        value = getattr(budget, limit) if budget is not None else None
        return float(value) if value is not None else None

    def spent(self, scope: str | None, limit: str) -> float:
        """What the scope spent of ``limit`` so far (the run's time: up to now)."""
        if limit == "seconds":
            state = self.state
            since = state.running_since
            now = elapsed(since, self.rec.now()) if since is not None else 0.0
            return state.seconds + max(now, 0.0)
        spent: Spent = self.state.spent_by(scope)
        return float(getattr(spent, limit))

    def _scopes(self, node: str) -> tuple[str | None, ...]:
        """The run's scope, and the node's own when it is an agent with a budget."""
        agent = self.flow.agents.get(node)
        own = agent is not None and (agent.budget is not None or self._raised_for(node))
        return (None, node) if own else (None,)

    def _raised_for(self, agent: str) -> bool:
        return any(scope == agent for scope, _ in self.state.raised)

    def left(self) -> dict[str, float]:
        """What the run's budget has left of each limit a sub-flow's run spends."""
        found: dict[str, float] = {}
        for limit in (*_CALL_LIMITS, "tool_calls"):
            allowed = self.allowed(None, limit)
            if allowed is not None:
                found[limit] = _rounded(max(allowed - self.spent(None, limit), 0.0))
        return found

    # ------------------------------------------------------------------ the checks

    def provider_for(self, node: str, provider: str) -> str:
        """The provider ``node`` calls: a switch_to's in place of its own, once switched."""
        switched = self.state.switched
        if not switched:
            return provider
        return switched.get(node) or switched.get(None) or provider

    def before_call(self, node: str, provider: str, request: ModelRequest) -> str:
        """The provider to call; raises BudgetHalt when the call would pass a limit."""
        provider = self.provider_for(node, provider)
        estimate = self._estimate(provider, request)
        for scope in self._scopes(node):
            for limit in _CALL_LIMITS:
                over = self._over(scope, limit, estimate.of(limit))
                if over is None:
                    continue
                spent, allowed = over
                target = self._switch(scope)
                if target is not None and target != provider:
                    self._record(limit, spent, allowed, "switch_to", scope, node, estimate, target)
                    return self.before_call(node, target, request)
                self._exhausted(limit, spent, allowed, scope, node, estimate.of(limit))
        return provider

    def before_tools(self, agent: str, calls: int) -> None:
        """Raises BudgetHalt when a round of ``calls`` tool calls would pass a limit."""
        for scope in self._scopes(agent):
            for limit, adds in (("tool_calls", float(calls)), ("seconds", 0.0)):
                over = self._over(scope, limit, adds)
                if over is not None:
                    self._exhausted(limit, over[0], over[1], scope, agent, adds or None)

    def before_step(self, node: str) -> None:
        """Raises BudgetHalt when the run's time is used up before ``node`` speaks."""
        for scope in self._scopes(node):
            over = self._over(scope, "seconds", 0.0)
            if over is not None:
                self._exhausted("seconds", over[0], over[1], scope, node, None)

    def _over(self, scope: str | None, limit: str, adds: float) -> tuple[float, float] | None:
        """(spent, allowed) when adding ``adds`` passes the scope's ``limit``, else None."""
        allowed = self.allowed(scope, limit)
        if allowed is None:
            return None
        spent = self.spent(scope, limit)
        # The time is used up when it is reached; a count or an amount when passed.
        over = spent >= allowed if limit == "seconds" else spent + adds > allowed
        return (spent, allowed) if over else None

    def _switch(self, scope: str | None) -> str | None:
        budget = self._budget(scope)
        action = budget.on_exhausted if budget is not None else None
        return action.switch_to if isinstance(action, SwitchTo) else None

    def _estimate(self, provider: str, request: ModelRequest) -> Estimate:
        """The call's prompt as characters over the provider's characters per token, and
        its answer at the provider's max_tokens, priced by the flow's entry."""
        from roost.pricing import cost_of

        chars = len(request.system) + sum(_chars(m) for m in request.messages)
        chars += sum(
            len(t.name) + len(t.description) + len(str(t.parameters)) for t in request.tools
        )
        # Every message costs a few tokens of its own (its role, its separators) besides
        # its text, as APIs count them: short messages would be underestimated without.
        prompt = math.ceil(chars / self.state.chars_per_token(provider))
        prompt += MESSAGE_TOKENS * (len(request.messages) + 1)
        config = self.flow.providers.get(provider)
        answer = (config.max_tokens if config is not None else None) or ASSUMED_MAX_TOKENS
        if config is not None and config.kind == "scripted":
            return Estimate(0.0, 0)  # answers with no tokens, for nothing
        tokens = _Tokens(prompt, answer)
        return Estimate(cost_of(tokens, config).amount, prompt + answer)

    # ------------------------------------------------------------------ the actions

    def _exhausted(
        self,
        limit: str,
        spent: float,
        allowed: float,
        scope: str | None,
        node: str,
        estimate: float | None,
    ) -> None:
        """Stops the run or asks, as the scope's budget says; always raises BudgetHalt."""
        budget = self._budget(scope) or _DEFAULT
        if budget.on_exhausted == "ask":
            self._record(limit, spent, allowed, "ask", scope, node, estimate)
            self.rec.add(InterruptEvent, from_=BUDGET_NODE, to=node, reason="budget")
        else:  # stop, or a switch_to already made (or to the provider refused)
            self._record(limit, spent, allowed, "stop", scope, node, estimate)
            self.rec.add(TerminateEvent, node=node, reason="budget")
        self.rec.flush()
        raise BudgetHalt(limit)

    def _record(
        self,
        limit: str,
        spent: float,
        allowed: float,
        action: str,
        scope: str | None,
        node: str,
        estimate: Estimate | float | None,
        provider: str | None = None,
    ) -> None:
        adds = estimate.of(limit) if isinstance(estimate, Estimate) else estimate
        fields = {"provider": provider} if provider is not None else {}
        self.rec.add(
            BudgetEvent,
            limit=limit,
            spent=_rounded(spent),
            allowed=allowed,
            action=action,
            agent=scope,
            node=node,
            estimate=None if adds is None else _rounded(adds),
            **fields,
        )

    def answer(self, feedback: str, asked: BudgetEvent) -> bool:
        """Records a person's answer to ``asked``: a new limit (True) or no (False).

        Raises UsageError for an answer that is neither, before anything is recorded.
        """
        text = feedback.strip()
        if text.lower() in _NO:
            return False
        limit = parse_limit(text, asked.limit, asked.spent)
        self.rec.add(
            BudgetEvent,
            limit=asked.limit,
            spent=asked.spent,
            allowed=limit,
            action="raised",
            agent=asked.agent,
            node=asked.node,
        )
        return True


def parse_limit(text: str, limit: str, spent: float = 0.0) -> float:
    """A new limit as written (``0.75``, ``$0.75``), above what was spent; else UsageError."""
    from roost.errors import UsageError

    try:
        value = float(text.strip().removeprefix("$"))
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise UsageError(
            f"the budget asks for a new {limit} limit: answer with a positive number "
            f"(more than the {_rounded(spent):g} spent), or no to stop the run"
        )
    if value <= spent:
        raise UsageError(
            f"a new {limit} limit of {value:g} is not above the {_rounded(spent):g} spent; "
            "answer with more, or no to stop the run"
        )
    return value


def asked_budget(state: RunState) -> BudgetEvent | None:
    """The budget's question the run is paused at, if it is."""
    pending = state.pending
    if not isinstance(pending, InterruptEvent) or pending.reason != "budget":
        return None
    for event in reversed(state.budget_events):
        if event.action == "ask":
            return event
    return None


def _rounded(amount: float) -> float:
    return round(amount, 9)


def _chars(message: object) -> int:
    content = getattr(message, "content", "")
    size = len(content) if isinstance(content, str) else 0
    for call in getattr(message, "tool_calls", ()) or ():
        size += len(call.name) + len(str(call.arguments))
    return size


@dataclass(frozen=True, slots=True)
class _Tokens:
    """An estimated call's usage, as pricing reads one."""

    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
