"""Text no log can hold (lone UTF-16 surrogates) never reaches an event, the store or a terminal."""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING

from rich.console import Console

from roost.cli.console import RunConsole
from roost.engine import Runner
from roost.engine.recorder import Recorder
from roost.engine.sources import Sources
from roost.events import ToolResultEvent, event_json
from roost.messages import AssistantMessage, ModelRequest, ModelResponse
from roost.ports import MemoryLog
from roost.runstate import RunState
from tests.cli_inprocess import run_cli
from tests.engine.conftest import make_flow

if TYPE_CHECKING:
    from pathlib import Path

    from roost.providers.base import TextCallback

EMOJI = "\U0001f600"
HIGH, LOW = "\ud83d", "\ude00"  # the emoji's two UTF-16 halves


class SplitEmojiProvider:
    """Streams an emoji in two chunks, each one half of it, as a JSON stream can."""

    name = "split"
    model = "split-model"

    async def complete(
        self, request: ModelRequest, *, on_text: TextCallback | None = None
    ) -> ModelResponse:
        if on_text is not None:
            on_text(f"hi {HIGH}")
            on_text(LOW)
        return ModelResponse(
            message=AssistantMessage(content=f"hi {HIGH}{LOW}"), provider="split", model="m"
        )


FLOW = """
roost: 1
name: hygiene
providers: {split: {kind: scripted, replies: []}}
agents:
  USER: {role: u, interrupt: ALWAYS}
  bot: {role: b, provider: split}
start: {from: USER, to: bot, content: "go \\ud800 on"}
"""


async def test_a_run_records_only_text_utf8_can_hold() -> None:
    log = MemoryLog("r")
    out = io.StringIO()
    console = RunConsole(Console(file=out, force_terminal=False, width=200))
    runner = Runner(
        flow=make_flow(FLOW),
        log=log,
        on_text=console.on_text,
        sources=Sources(providers=lambda name: SplitEmojiProvider()),  # type: ignore[arg-type,return-value]
    )
    state = await runner.start()
    assert state.status == "paused"
    for event in log.load():
        event_json(event).encode("utf-8")  # raises on a lone surrogate
    said = [e.content for e in log.load() if e.type == "message"]
    assert said == ["go \ufffd on", f"hi {EMOJI}"]
    assert f"hi {EMOJI}" in out.getvalue()


def test_a_tool_result_with_a_lone_surrogate_is_recorded_cleanly() -> None:
    recorder = Recorder(RunState(), MemoryLog("r"))
    event = recorder.add(
        ToolResultEvent, agent="a", id="c1", name="t", content=f"bad{HIGH}", is_error=False
    )
    assert event.content == "bad\ufffd"


def test_an_argument_that_is_not_utf8_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for args in ([b"show", b"run-\xff"], [b"run", b"flow.yaml", b"--message", b"\xff"]):
        # The bytes a shell passes, as the interpreter hands them to the program (sys.argv).
        done = run_cli(*map(os.fsdecode, args), cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.splitlines() == [
            "roost: error: argument '"
            + args[-1].decode("utf-8", "backslashreplace").replace("\\xff", "\\udcff")
            + "' is not valid UTF-8 text"
        ]
