"""The composition root: the providers and tools a Runner uses when its caller names none.

The engine works against two small interfaces, ``providers(name) -> Provider``
and ``tools(agent, latest_user_text) -> [Tool]``, and knows no backend and no
kind of tool. This module is the one place that picks the implementations: the
provider registry (one backend per ``kind``, positioned from the run's state)
and the toolbox of ``roost.tools``, whose sub-flows run as child runs through
the ``SubflowRunner`` the Runner hands it. Tests and embedders replace either
by passing ``providers=`` or ``tools=`` to the Runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.errors import RoostError
from roost.providers.base import Provider, ProviderContext
from roost.providers.registry import build_provider

if TYPE_CHECKING:  # roost.tools is imported only by flows that have tools
    from roost.flow.models import Flow
    from roost.ports import MemoryBank
    from roost.runstate import RunState
    from roost.tools.subflow import SubflowRunner
    from roost.tools.toolbox import Toolbox


def default_provider(flow: Flow, state: RunState, name: str) -> Provider:
    """The provider entry ``name`` of ``flow``, positioned where the run's log leaves it."""
    if name not in flow.providers:
        raise RoostError(f"no provider is called {name!r}")
    context = ProviderContext(
        attempts_so_far=dict(state.provider_attempts),
        secrets=flow.secrets,
        env_files=flow.env_files,
    )
    return build_provider(name, flow, context)


def default_toolbox(
    flow: Flow, subflows: SubflowRunner, memory: MemoryBank | None = None, run: str = ""
) -> Toolbox:
    """The tools of ``flow``'s agents; its ``flow:`` tools run through ``subflows``."""
    # Imported only now: a flow without tools never pays for the tool machinery (MCP SDK).
    from roost.tools import toolbox_for

    return toolbox_for(flow, runner=subflows, memory=memory, run=run)
