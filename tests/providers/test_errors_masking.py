"""A provider error that echoes the API key where its text is cut: no piece of the key shows."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from cli_inprocess import run_cli
from fakes.script import Status

from roost.errors import ProviderError
from roost.messages import ModelRequest, UserMessage

from .conftest import API_KEY, MakeProvider

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer

ASK = ModelRequest(system="s", messages=(UserMessage(content="hello"),))
DATA = Path(__file__).parent / "data"
LIMIT = 300  # characters of a server's message quoted in an error


def pieces_of_the_key(text: str) -> list[str]:
    """The starts of the key, three characters or more, that ``text`` shows."""
    return [API_KEY[:n] for n in range(3, len(API_KEY) + 1) if API_KEY[:n] in text]


@pytest.mark.parametrize("offset", [LIMIT - 12, LIMIT - 6, LIMIT - 4])
async def test_a_key_straddling_the_cut_leaves_no_piece(
    kind: str, offset: int, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    echo = "x" * offset + f"{API_KEY} was refused"
    server.script(Status(400, echo, "invalid_request_error"))
    with pytest.raises(ProviderError) as caught:
        await make_provider(kind).complete(ASK)
    message = str(caught.value)
    assert "x" * 100 in message and message.endswith("…)")  # it was cut
    assert pieces_of_the_key(message) == []


def test_nothing_of_the_key_reaches_the_terminal_the_file_or_the_store(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    flow = tmp_path / "adder.yaml"
    flow.write_text(
        (DATA / "adder.yaml").read_text().replace("provider: PROVIDER", "provider: chat")
    )
    shutil.copy(DATA / "calc.py", tmp_path / "calc.py")
    db = tmp_path / "runs.db"
    env = {
        **os.environ,
        "FAKE_LLM_URL": server.url,
        "FAKE_LLM_KEY": API_KEY,
        "ROOST_DB": f"sqlite:///{db}",
    }
    server.script(Status(400, "x" * (LIMIT - 8) + API_KEY, "invalid_request_error"))
    ran = run_cli("run", str(flow), "--no-input", "--events", "run.jsonl", cwd=tmp_path, env=env)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert "HTTP 400" in ran.stderr
    recorded = ran.stdout + ran.stderr + (tmp_path / "run.jsonl").read_text()
    assert pieces_of_the_key(recorded) == []
    assert API_KEY[:6].encode() not in db.read_bytes()
