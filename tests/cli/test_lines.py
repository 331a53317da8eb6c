"""A run's output without a terminal: plain text, the same text rich prints, sent on in time."""

from __future__ import annotations

import asyncio
import io
from typing import TYPE_CHECKING, Any

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from roost.cli.console import RunConsole
from roost.cli.lines import PlainLines, RichLines, lines_for
from roost.engine import Runner
from roost.engine.sources import Sources
from roost.ports import MemoryLog
from tests.engine.conftest import make_flow
from tests.fakes.tools import FakeTool

if TYPE_CHECKING:
    from roost.events import Event

# Every kind of line a run prints: picks, streamed and whole messages, tool calls and
# results (one failing), text written before tool calls, an error, odd characters.
FLOW = """
roost: 1
name: every-line
defaults: {provider: mock, max_rounds: 12}
providers:
  mock:
    kind: scripted
    replies:
      - "tab\\there, [bold]not markup[/], :smile:, wide 漢字\\tand a bell \\a"
      - {tool_calls: [{name: look, arguments: {"q": "[x]"}}, {name: fail, arguments: {}}]}
      - "two\\nlines  "
      - {error: the model fell over}
  quiet: {kind: scripted, stream: false, replies: ["not streamed \\t[/]"]}
agents:
  USER: {role: A person.}
  alice: {role: A.}
  bob: {role: B., functions: [look, fail]}
  carol: {role: C., provider: quiet}
channels:
  room:
    members: [alice, bob, carol]
    director: {strategy: round_robin}
start: {from: USER, to: room, content: "go\\tnow [red]"}
"""


def tools(agent: str, text: str) -> list[Any]:
    return [FakeTool("look", "found\t[it]"), FakeTool("fail", fail=True)]


def console(runner: list[Runner], *, terminal: bool) -> tuple[RunConsole, io.StringIO]:
    out = io.StringIO()
    # A terminal without colour: rich's output, escape codes aside, is the text a person reads.
    rich = Console(file=out, force_terminal=terminal, color_system=None, soft_wrap=True)
    step = lambda: runner[0].state.step  # noqa: E731
    return RunConsole(rich, channels=["room"], tool_users=["bob"], step=step), out


async def test_a_pipe_gets_the_text_a_terminal_shows() -> None:
    made: list[Runner] = []
    plain, plain_out = console(made, terminal=False)
    rich, rich_out = console(made, terminal=True)
    assert isinstance(plain.lines, PlainLines) and isinstance(rich.lines, RichLines)

    def on_event(event: Event) -> None:
        plain.on_event(event)
        rich.on_event(event)

    def on_text(node: str, chunk: str) -> None:
        plain.on_text(node, chunk)
        rich.on_text(node, chunk)

    log = MemoryLog("r")
    runner = Runner(
        flow=make_flow(FLOW),
        log=log,
        on_event=on_event,
        on_text=on_text,
        sources=Sources(tools=tools),
    )
    made.append(runner)
    state = await runner.start()
    assert state.status == "error"
    plain.flush()
    shown = plain_out.getvalue()
    assert shown == rich_out.getvalue()
    # Every kind of line is there, so the comparison covered them all.
    for seen in (
        "USER → room: go now [red]\n",  # the tab reaches column 16
        "room picks alice (round robin)\n",
        "alice → room: tab     here, [bold]not markup[/], :smile:, wide 漢字   and a bell \n",
        '  bob calls look({"q": "[x]"})\n',
        "  look → found [it]:{'q': '[x]'}\n",
        "  fail → error fail failed: RuntimeError: it broke\n",
        "bob: two\nlines  \n",
        "carol → room: not streamed    [/]\n",
        "error at alice: provider 'mock': the model fell over\n",
    ):
        assert seen in shown, (seen, shown)


pieces = st.lists(
    st.tuples(
        st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30),
        st.sampled_from(["", "bold cyan", "dim", "dim red", "yellow"]),
    ),
    max_size=5,
)


@given(lines=st.lists(st.tuples(pieces, st.sampled_from(["\n", ""])), max_size=6))
def test_plain_lines_are_what_rich_prints_without_a_terminal(
    lines: list[tuple[list[tuple[str, str]], str]],
) -> None:
    plain_out, rich_out = io.StringIO(), io.StringIO()
    plain = PlainLines(Console(file=plain_out, force_terminal=False))
    rich = RichLines(Console(file=rich_out, force_terminal=False, soft_wrap=True))
    for line, end in lines:
        plain.write(line, end=end)
        rich.write(line, end=end)
    plain.flush()
    assert plain_out.getvalue() == rich_out.getvalue()


def test_a_terminal_gets_rich_and_anything_else_plain_lines() -> None:
    assert isinstance(lines_for(Console(file=io.StringIO(), force_terminal=True)), RichLines)
    assert isinstance(lines_for(Console(file=io.StringIO(), force_terminal=False)), PlainLines)


class CountingFile(io.StringIO):
    """A file that counts its flushes and remembers what was flushed."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed = ""

    def flush(self) -> None:
        self.flushed = self.getvalue()
        super().flush()


def test_without_an_event_loop_each_line_is_sent_at_once() -> None:
    out = CountingFile()
    lines = PlainLines(Console(file=out, force_terminal=False))
    lines.write([("one", "")])
    assert out.flushed == "one\n"


async def test_in_a_run_lines_are_sent_on_when_the_loop_next_gets_control() -> None:
    out = CountingFile()
    lines = PlainLines(Console(file=out, force_terminal=False))
    lines.flush()  # as if the last flush had just happened
    lines.write([("one", "")])
    lines.write([("two", "")])
    assert out.flushed == ""  # buffered while the run goes on without waiting
    await asyncio.sleep(0)  # the run waits (for a model, a tool, a person)
    assert out.flushed == "one\ntwo\n"


async def test_a_run_that_never_waits_still_sends_its_lines_on() -> None:
    out = CountingFile()
    lines = PlainLines(Console(file=out, force_terminal=False))
    lines.flush()
    lines.write([("one", "")])
    assert out.flushed == ""
    lines._flushed -= 1.0  # a second later, still without the loop getting control
    lines.write([("two", "")])
    assert out.flushed == "one\ntwo\n"


def test_a_flush_left_to_a_loop_that_ended_is_asked_of_the_next_one() -> None:
    out = CountingFile()
    lines = PlainLines(Console(file=out, force_terminal=False))

    async def write(text: str) -> None:
        lines.write([(text, "")])

    loop = asyncio.new_event_loop()
    lines.flush()

    async def write_and_stop() -> None:
        await write("one")
        loop.stop()  # the loop ends before it turns again

    task = loop.create_task(write_and_stop())
    loop.run_forever()
    loop.close()
    assert task.done()
    assert out.flushed == ""

    async def write_and_wait() -> None:
        await write("two")
        await asyncio.sleep(0)

    asyncio.run(write_and_wait())
    assert out.flushed == "one\ntwo\n"
