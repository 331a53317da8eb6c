"""How a run stops moving: an error recorded masked at once, a pause or an end put off while
background tasks are open (``test_background.py`` runs whole flows through that)."""

from __future__ import annotations

from roost.engine._endings import Endings
from roost.engine.recorder import Recorder
from roost.events import BackgroundEvent, ErrorEvent, InterruptEvent, TerminateEvent
from roost.flow.redact import Redactor
from roost.ports import MemoryLog
from roost.runstate import RunState

SECRET = "sk-live-0123456789abcdef"


class NoBackground:
    """A background source the endings only ask whether there is one."""


def open_task() -> BackgroundEvent:
    return BackgroundEvent(
        seq=0,
        run="r1",
        ts="",
        task="bg-1",
        agent="bot",
        to="USER",
        tool="t",
        call="c1",
        child_run="c",
    )


def endings(state: RunState) -> tuple[Endings, MemoryLog]:
    log = MemoryLog("r1")
    return Endings(Recorder(state, log), Redactor([SECRET]), NoBackground()), log  # type: ignore[arg-type]


def test_an_error_is_written_at_once_with_its_secrets_masked() -> None:
    ends, log = endings(RunState())
    ends.fail("bot", "USER", f"the server refused {SECRET}")
    [error] = log.load()
    assert isinstance(error, ErrorEvent)
    assert (error.from_, error.to) == ("bot", "USER")
    assert SECRET not in error.content and error.content == "the server refused ***"
    assert not ends.held


def test_a_pause_and_an_end_wait_while_a_background_task_is_open() -> None:
    state = RunState()
    state.background["bg-1"] = open_task()
    ends, log = endings(state)
    ends.pause("bot", "USER")
    ends.terminate("bot", "keyword")
    assert log.load() == [] and ends.held
    del state.background["bg-1"]  # its result was delivered
    ends.pause("bot", "USER")
    ends.terminate("bot", "keyword")
    kinds = [type(event) for event in log.load()]
    assert kinds == [InterruptEvent, TerminateEvent]
    assert log.load()[0].reason == "human"  # type: ignore[union-attr]


def test_without_a_background_source_nothing_is_held() -> None:
    state = RunState()
    state.background["bg-1"] = open_task()
    log = MemoryLog("r1")
    ends = Endings(Recorder(state, log), Redactor([]), None)
    ends.terminate("bot", "keyword")
    assert [type(event) for event in log.load()] == [TerminateEvent] and not ends.held
