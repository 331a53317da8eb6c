"""Fixtures: a fake OpenAI-compatible server that reports usage, and flows priced on it."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import pytest
from fakes.llm_server import FakeLLMServer, Received
from fakes.script import Action, FakeUsage, Reply

from roost.flow import load_flow_text

if TYPE_CHECKING:
    from collections.abc import Iterator

    from roost.flow.models import Flow

API_KEY = "sk-test-BUDGET-1234"
# Dollars per million tokens: a token in is a thousandth of a dollar, a token out two.
PRICE = "{input: 1000, output: 2000}"
CHEAP = "{input: 10, output: 20}"


class Looping:
    """Answers every request: a director names the members in turn, forever; an agent
    says something. The usage reported is the request's size (the fake's own count)."""

    def __init__(self) -> None:
        self.picks = 0

    def __call__(self, received: Received) -> Action:
        system = str(received.body["messages"][0].get("content", ""))
        if "You direct" in system:
            self.picks += 1
            return Reply(text="ab"[self.picks % 2], usage=FakeUsage(completion=1))
        return Reply(text="more, and more", usage=FakeUsage(completion=4))


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    # window: every reply reports the request's own size as its prompt tokens.
    with FakeLLMServer(window=1_000_000, responder=Looping()) as fake:
        yield fake


def provider(server: FakeLLMServer, price: str = PRICE, model: str = "fake-model") -> str:
    return (
        f'{{kind: openai, model: {model}, base_url: "{server.url}/v1", api_key: {API_KEY}, '
        f"max_retries: 0, stream: false, max_tokens: 8, price: {price}}}"
    )


def looping_flow(server: FakeLLMServer, budget: str, *, extra: str = "", agent: str = "") -> Flow:
    """Two members and an llm director that never ends the conversation."""
    text = f"""\
roost: 1
defaults: {{provider: llm, max_rounds: 1000}}
providers:
  llm: {provider(server)}
  cheap: {provider(server, CHEAP, "cheap-model")}
budget: {budget}
agents:
  a: {{role: You are a.{", budget: " + agent if agent else ""}}}
  b: {{role: You are b.}}
channels:
  room:
    members: [a, b]
    max_rounds: 1000
    role: You direct the room.
    director: {{allow_repeat: true}}
start: {{from: a, to: room, content: "Talk."}}
{extra}"""
    return load_flow_text(textwrap.dedent(text), "flow.yaml")
