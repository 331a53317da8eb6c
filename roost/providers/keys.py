"""Which provider entries of a flow have no API key in this environment.

A provider of a vendor's API (``openai``, ``openai-responses``, ``anthropic``)
with no ``api_key`` and no ``base_url`` sends the vendor's variable
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``), read from the environment or the
flow's .env files. The file is right without it: ``roost validate`` warns, and
``roost run`` refuses before a run is stored, when a provider the run needs
(and every fallback of it) has none.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from roost.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from roost.errors import Problem
    from roost.flow.models import Flow

# The variable each vendor's SDK reads its key from, by provider kind.
KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "openai-responses": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}


@dataclass(frozen=True, slots=True)
class MissingKey:
    """A provider entry without a key to send, and the variable that would give it one."""

    provider: str
    variable: str

    def advice(self) -> str:
        return (
            f"provider {self.provider!r} has no API key in this environment: set {self.variable} "
            f'(or in a .env file beside the flow), or give it api_key: "${{{self.variable}}}"'
        )


def missing_keys(flow: Flow, environ: Mapping[str, str] | None = None) -> list[MissingKey]:
    """Every provider entry of ``flow`` that has no key in this environment, in file order."""
    env = os.environ if environ is None else environ
    missing: list[MissingKey] = []
    for name, config in flow.providers.items():
        variable = KEY_ENV.get(config.kind)
        if variable is None or config.api_key or config.base_url:
            continue
        if not (env.get(variable) or flow.env_files.get(variable)):
            missing.append(MissingKey(name, variable))
    return missing


def key_warnings(flow: Flow, environ: Mapping[str, str] | None = None) -> list[Problem]:
    """A warning at each provider entry that has no key here (the file itself is right)."""
    return [
        flow.problem(("providers", found.provider), f"{found.advice()} (a run needs it)", "warning")
        for found in missing_keys(flow, environ)
    ]


def unreachable(flow: Flow, environ: Mapping[str, str] | None = None) -> MissingKey | None:
    """The first provider a run of ``flow`` calls that, with every fallback, has no key.

    A provider counts when an agent answers through it (a person's agent, with
    ``interrupt: ALWAYS``, only when it names one itself) or an ``llm`` director
    chooses through it. A fallback that has its key is enough.
    """
    missing = {found.provider: found for found in missing_keys(flow, environ)}
    if not missing:
        return None
    for name in _called(flow):
        if _chain(flow, name) <= missing.keys():
            return missing[name]
    return None


def refuse_keyless(flow: Flow) -> None:
    """UsageError, before a run is stored, when a provider the run needs has no API key here
    (nor has any of its fallbacks): the run could only stop at its first model call."""
    found = unreachable(flow)
    if found is not None:
        raise UsageError(f"{flow.path}: {found.advice()}")


def _called(flow: Flow) -> list[str]:
    """The providers a run of ``flow`` answers through, in the file's order of nodes."""
    default = flow.defaults.provider
    names: list[str | None] = []
    for agent_name, agent in flow.agents.items():
        person = flow.interrupt_of(agent_name) == "ALWAYS"
        names.append(agent.provider if person else agent.provider or default)
    for channel in flow.channels.values():
        if channel.director.strategy == "llm":
            names.append(channel.director.provider or default)
    return list(dict.fromkeys(name for name in names if name in flow.providers))


def _chain(flow: Flow, name: str) -> set[str]:
    """``name`` and every provider it falls back on, through their own fallbacks too."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen or current not in flow.providers:
            continue
        seen.add(current)
        todo.extend(flow.providers[current].fallback)
    return seen
