"""A provider reporting usage that cannot be right: corrected at the edge, noted, never a crash."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from cli_inprocess import run_cli
from fakes.script import FakeUsage, Reply

from roost.messages import ModelRequest, Usage, UserMessage
from roost.providers._usage import MAX_TOKENS, UsageCheck

from .conftest import API_KEY, MakeProvider

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

ASK = ModelRequest(system="s", messages=(UserMessage(content="hello"),))
DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(
    ("prompt", "kept"),
    [(10**20, MAX_TOKENS), (-5, 0), (12.5, 12), (float("inf"), 0), (2**70, MAX_TOKENS)],
    ids=["10**20", "negative", "fraction", "infinity", "2**70"],
)
async def test_absurd_usage_is_clamped_with_a_note(
    kind: str,
    stream: bool,
    prompt: float,
    kept: int,
    server: FakeLLMServer,
    make_provider: MakeProvider,
) -> None:
    server.script(Reply(text="fine", usage=FakeUsage(prompt=prompt, completion=3)))  # type: ignore[arg-type]
    response = await make_provider(kind, stream=stream).complete(ASK)
    assert response.message.content == "fine"
    assert response.usage == Usage(prompt_tokens=kept, completion_tokens=3)
    (note,) = response.notes
    assert "cannot be a token count" in note and note.endswith(f"recorded as {kept}")


@pytest.mark.parametrize(
    ("value", "kept", "noted"),
    [
        (7, 7, False),
        (None, 0, False),
        (7.0, 7, True),
        ("12", 12, True),
        ("lots", 0, True),
        (True, 0, True),
        (float("nan"), 0, True),
        ({"n": 1}, 0, True),
        (10**5000, MAX_TOKENS, True),  # too long even to print
        ("9" * 100_000, 0, True),
    ],
    ids=["int", "null", "float", "digits", "word", "bool", "nan", "object", "huge", "long-text"],
)
def test_every_count_becomes_a_whole_number_in_range(value: object, kept: int, noted: bool) -> None:
    check = UsageCheck()
    assert check("prompt_tokens", value) == kept
    assert len(check.notes) == int(noted)
    assert all(len(note) < 200 for note in check.notes)


def test_a_run_with_absurd_usage_finishes_its_step_and_is_stored(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    flow = tmp_path / "adder.yaml"
    flow.write_text(
        (DATA / "adder.yaml").read_text().replace("provider: PROVIDER", "provider: chat")
    )
    shutil.copy(DATA / "calc.py", tmp_path / "calc.py")
    env = {**os.environ, "FAKE_LLM_URL": server.url, "FAKE_LLM_KEY": API_KEY, "ROOST_DB": ""}
    server.script(Reply(text="5", usage=FakeUsage(prompt=10**20, completion=-3)))
    ran = run_cli("run", str(flow), "--no-input", "--events", "run.jsonl", cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    assert f"usage: 1 calls, {MAX_TOKENS} prompt tokens, 0 completion tokens" in ran.stdout
    call = next(
        event
        for line in (tmp_path / "run.jsonl").read_text().splitlines()
        if (event := json.loads(line))["type"] == "llm_call"
    )
    assert call["usage"]["prompt_tokens"] == MAX_TOKENS
    assert len(call["response"]["notes"]) == 2
    runs = run_cli("runs", cwd=tmp_path, env=env)
    assert runs.returncode == 0 and "paused" in runs.stdout  # the store took the numbers
