"""Context and cost as a user meets them on the command line, against a model with a window.

The fake server refuses any request above its window, like a real model, and
reports each request's size as its prompt tokens; the flow's model is in
roost's table, so its cost is estimated from list prices.
"""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING

from fakes.llm_server import FakeLLMServer, Received
from fakes.script import Action, Reply

from .conftest import API_KEY, roost

if TYPE_CHECKING:
    from pathlib import Path

SENTENCE = "The sea is wide and deep, and the tide comes in twice a day. "


def answer(received: Received) -> Action:
    return Reply(text=f"reply {len(received.body.get('messages', ()))}: " + SENTENCE * 4)


def write_flow(folder: Path, url: str, extra: str = "") -> Path:
    flow = folder / "chat.yaml"
    flow.write_text(
        textwrap.dedent(
            f"""\
            roost: 1
            name: long-chat
            defaults: {{provider: llm, max_rounds: 16}}
            providers:
              llm: {{kind: openai, model: gpt-4o-mini, base_url: "{url}/v1", api_key: {API_KEY},
                    max_retries: 0, stream: false, context_window: 600{extra}}}
            agents:
              a: {{role: You are a.}}
              b: {{role: You are b.}}
            start: {{from: a, to: b, content: "Tell me about the sea."}}
            """
        )
    )
    return flow


def test_run_and_show_give_cost_and_each_nodes_context_against_its_window(
    tmp_path: Path,
) -> None:
    with FakeLLMServer(window=600, responder=answer) as server:
        flow = write_flow(tmp_path, server.url)
        env = {"ROOST_DB": str(tmp_path / "roost.db")}
        events = tmp_path / "run.jsonl"
        ran = roost("run", str(flow), "--events", str(events), cwd=tmp_path, env=env)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert server.refused == 0  # compressed before the model had to refuse anything
    out = ran.stdout
    assert re.search(r"usage: \d+ calls, \d+ prompt tokens, .* cost \$0\.\d+ \(estimated\)", out)
    sizes = re.findall(r"context: (\w) → (\w): ~(\d+) of 600 tokens \((\d+)%\)", out)
    assert {(a, b) for a, b, _, _ in sizes} == {("a", "b"), ("b", "a")}
    assert all(int(tokens) <= 600 for _, _, tokens, _ in sizes)

    shown = roost("show", str(events), cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"⇲ \w's view of its talk with \w compressed \(summary: ", shown.stdout)
    assert re.search(r"cost \$0\.\d+ \(estimated\)", shown.stdout)
    assert "of 600 tokens" in shown.stdout

    replayed = roost("replay", str(events), cwd=tmp_path, env=env)
    assert replayed.returncode == 0 and "identical" in replayed.stdout, replayed.stdout

    listed = roost("runs", cwd=tmp_path, env=env)
    row = next(line for line in listed.stdout.splitlines() if "long-chat" in line)
    assert re.search(r" ~\$0\.\d+ ", row), row  # ~: estimated from the table's prices


def test_a_price_in_the_flow_gives_a_cost_that_is_not_estimated(tmp_path: Path) -> None:
    with FakeLLMServer(window=600, responder=answer) as server:
        flow = write_flow(tmp_path, server.url, ", price: {input: 1000, output: 2000}")
        env = {"ROOST_DB": str(tmp_path / "roost.db")}
        ran = roost("run", str(flow), cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr
    cost = re.search(r"cost \$([\d.,]+)(.*)", ran.stdout)
    assert cost is not None and cost.group(2).strip() == ""
    assert float(cost.group(1).replace(",", "")) > 1  # thousands of tokens at $1000 a million


def test_a_refusal_as_too_long_is_said_and_its_servers_limit_is_used_from_then_on(
    tmp_path: Path,
) -> None:
    # The flow names no window: roost's table says 128,000 for gpt-4o-mini, but this server
    # refuses anything above 600 tokens, and says so in OpenAI's words.
    with FakeLLMServer(window=600, responder=answer) as server:
        flow = write_flow(tmp_path, server.url)
        flow.write_text(flow.read_text().replace(", context_window: 600", ""))
        env = {"ROOST_DB": str(tmp_path / "roost.db")}
        events = tmp_path / "run.jsonl"
        ran = roost("run", str(flow), "--events", str(events), cwd=tmp_path, env=env)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        refused = server.refused
    lines = ran.stdout.splitlines()
    said = [line for line in lines if "refused" in line and "as too long" in line]
    assert said and re.fullmatch(
        r"⇲ llm refused \w's request as too long \(its server's limit: 600 tokens\): "
        r"compressing its view and trying once more",
        said[0],
    ), ran.stdout
    # Once learnt, the limit is the window: later requests are compressed before sending.
    assert refused == len(said) == 1, ran.stdout
    compressed = [line for line in lines if re.match(r"⇲ \w's view of its talk with \w", line)]
    assert len(compressed) >= 2, ran.stdout  # each compaction said as it happens
    assert lines.index(said[0]) < lines.index(compressed[0]), ran.stdout
    sizes = re.findall(r"context: \w → \w: ~\d+ of ([\d,]+) tokens", ran.stdout)
    assert sizes and set(sizes) == {"600"}, ran.stdout
    shown = roost("show", str(events), cwd=tmp_path, env=env)
    assert "of 600 tokens" in shown.stdout and "128,000" not in shown.stdout, shown.stdout
    replayed = roost("replay", str(events), cwd=tmp_path, env=env)
    assert replayed.returncode == 0 and "identical" in replayed.stdout, replayed.stdout
