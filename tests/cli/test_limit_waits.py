"""``roost run`` says when a model call waits for its turn at a provider's limits, and its
usage line how long the run's calls waited."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fakes.llm_server import FakeLLMServer
from fakes.script import FakeUsage, Reply

from tests.cli_inprocess import run_cli

if TYPE_CHECKING:
    from pathlib import Path

FLOW = """
roost: 1
name: limited
providers:
  llm: {{kind: openai, model: m, base_url: "{url}/v1", api_key: k, max_retries: 0, {limits}}}
defaults: {{provider: llm}}
agents:
  USER: {{role: A person.}}
  a: {{role: You speak first.}}
  b: {{role: You speak second.}}
channels:
  room: {{members: [a, b], max_rounds: 2, director: {{strategy: round_robin}}}}
start: {{from: USER, to: room, content: hi}}
"""


def answering() -> FakeLLMServer:
    return FakeLLMServer(responder=lambda _: Reply(text="Hello.", usage=FakeUsage()))


def test_a_call_that_waited_for_its_turn_is_on_the_usage_line(tmp_path: Path) -> None:
    # 60 requests a minute, one a second: the second speaker's call waits for its turn.
    with answering() as llm:
        flow = FLOW.format(url=llm.url, limits="requests_per_minute: 60")
        (tmp_path / "limited.yaml").write_text(flow, encoding="utf-8")
        ran = run_cli("run", "limited.yaml", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    said = ran.stdout + ran.stderr
    # Said as the wait begins, before the second speaker's words, and summed at the end.
    assert said.index("(a call waits for its turn at llm's limits)") < said.index("b → ")
    found = re.search(r", 1 call waited (\d+\.\d) s for provider limits", said)
    assert found is not None and float(found.group(1)) >= 0.5  # a second, less the first call


def test_a_run_that_never_waited_says_nothing_of_limits(tmp_path: Path) -> None:
    with answering() as llm:
        flow = FLOW.format(url=llm.url, limits="max_concurrency: 1")
        (tmp_path / "limited.yaml").write_text(flow, encoding="utf-8")
        ran = run_cli("run", "limited.yaml", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "usage: 2 calls" in ran.stdout + ran.stderr
    assert "limits" not in ran.stdout + ran.stderr
