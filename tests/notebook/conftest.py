"""The notebook tests' picnic flow and its run; the visualize tests' headless Chromium."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import roost
from tests.visualize.conftest import browser

if TYPE_CHECKING:
    from roost.events import Event
    from roost.flow import Flow

__all__ = ["FLOW", "browser", "run_picnic"]

# A scout, a cook and the person in a round-robin channel; the person answers every turn.
FLOW = """\
roost: 1
name: picnic
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: ["A park by the river.", "Sandwiches and lemonade."]}
agents:
  USER: {interrupt: ALWAYS, role: The person planning the picnic.}
  scout: {role: You pick the place.}
  cook: {role: You plan the food.}
channels:
  planning: {members: [scout, cook, USER], max_rounds: 4, director: {strategy: round_robin}}
start: {from: USER, to: planning, content: Plan a picnic for four.}
"""


def run_picnic(flow: Flow, log: roost.EventLog) -> list[Event]:
    state = asyncio.run(roost.run(flow, log=log, answer=lambda state: "Perfect, thanks!"))
    assert state.status == "terminated"
    return log.load()
