"""Helpers for the engine's tests: flows from YAML text, runs on a memory log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakes.runners import runner_options

from roost.engine import Runner
from roost.flow import load_flow_text
from roost.ports import MemoryLog
from roost.testing import unchecked_flow

if TYPE_CHECKING:
    from pathlib import Path

    from roost.events import Event
    from roost.flow.models import Flow


def make_flow(text: str, path: str | Path | None = None) -> Flow:
    """A Flow from YAML text, unchecked: the engine's tests give most tools in code."""
    return unchecked_flow(text, path="<string>" if path is None else path)


def kinds(events: list[Event]) -> list[str]:
    return [event.type for event in events]


def messages(events: list[Event]) -> list[tuple[str, str, str]]:
    """(from, to, content) of each message event."""
    found = []
    for event in events:
        if event.type == "message":
            found.append((event.from_, event.to, event.content))
    return found


def runner_for(text: str, **options: Any) -> tuple[Runner, MemoryLog]:
    log = MemoryLog("run-1")
    return Runner(flow=make_flow(text), log=log, **runner_options(options)), log


# A value read from the environment, as a key would be.
SECRET = "sk-live-4242-very-secret"

# A flow that puts the secret it reads as ${TOKEN} in a start message, a tool call and a reply.
LEAKY = """
roost: 1
name: leaky
providers:
  mock:
    kind: scripted
    replies:
      - {echo: system}
      - tool_calls: [{name: shout, arguments: {text: "key ${TOKEN} here"}}]
      - "the key is ${TOKEN}"
      - TERMINATE
  person: {kind: scripted, replies: [ok, {echo: last}]}
tools:
  shout: {python: "loud:shout"}
agents:
  USER: {role: u, provider: person}
  bot: {role: "You help.", provider: mock, functions: [shout]}
start: {from: USER, to: bot}
"""
# Templates never read a secret (a flow putting one in vars or a role is refused), so
# the secret reaches the run through the start message, a tool call and a reply.

SHOUT = '''
def shout(text: str) -> str:
    """Repeats the text."""
    return "heard: " + text
'''


def write_flow(folder: Path) -> Path:
    """leaky.yaml and the tool module it names, in ``folder``."""
    (folder / "loud.py").write_text(SHOUT)
    path = folder / "leaky.yaml"
    path.write_text(LEAKY)
    return path


# A person asked at every turn (interrupt: ALWAYS) and a bot with four scripted replies.
ASK = """
roost: 1
name: ask
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [four, own words, five, TERMINATE]}
agents:
  USER: {interrupt: ALWAYS, role: the person}
  bot: {role: b}
start: {from: USER, to: bot, content: "2 + 2?"}
"""

# A sentence long enough that a few of them fill a small context window.
LONG = "The tide comes in and the tide goes out, and the gulls call over the water. "


def channel(
    *,
    replies: str = "[a, b, c, d, e, f, g, h]",
    strategy: str = "round_robin",
    members: str = "[x, y, z]",
    extra: str = "",
    director_extra: str = "",
    max_rounds: int = 4,
    defaults: str = "",
    start_from: str = "USER",
    user: str = "{role: A person.}",
) -> str:
    return f"""
roost: 1
name: chan
defaults: {{provider: mock{defaults}}}
providers:
  mock: {{kind: scripted, replies: {replies}}}
  boss: {{kind: scripted, replies: []}}
agents:
  x: {{role: X role.}}
  y: {{role: Y role., description: the y expert}}
  z: {{role: Z role.}}
  USER: {user}
channels:
  team:
    members: {members}
    max_rounds: {max_rounds}
    role: You direct the team.
    director: {{strategy: {strategy}{director_extra}}}
{extra}
start: {{from: {start_from}, to: team, content: Go}}
"""


def selects(log: MemoryLog) -> list[tuple[str, str]]:
    return [(e.chosen, e.by) for e in log.load() if e.type == "select"]


def pair(replies: str, *, extra: str = "", user: str = "{role: A person.}") -> str:
    return f"""
roost: 1
name: pair
defaults: {{provider: mock{extra}}}
providers:
  mock: {{kind: scripted, replies: {replies}}}
agents:
  USER: {user}
  assistant: {{role: You help.}}
start: {{from: USER, to: assistant, content: Hi}}
"""


# The runs the replay tests record: a chat with a person, an error and a retry; a tool loop.
CHAT = """\
roost: 1
name: chat
defaults: {provider: mock, max_rounds: 8}
providers:
  mock:
    kind: scripted
    replies: ["one", "two", "INTERRUPT", "three", {error: boom}, "four", "five"]
agents:
  writer: {role: "You write. {{ vars.tone }}"}
  critic: {role: You criticise.}
vars: {tone: calm}
start: {from: critic, to: writer, content: Write a poem}
"""

TOOLS_MODULE = '''
def add(a: int, b: int) -> int:
    """Adds."""
    return a + b
'''

TOOLS = """\
roost: 1
name: calc
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies:
      - {tool_calls: [{name: add, arguments: {a: 2, b: 3}}, {name: add, arguments: {a: 1, b: 1}}]}
      - "TERMINATE"
tools:
  add: {python: "replay_tools:add", description: Add two integers}
agents:
  user: {}
  calc: {functions: [add]}
start: {from: user, to: calc, content: add things}
"""


def flow_from(text: str, folder: Path, name: str = "flow.yaml") -> Flow:
    path = folder / name
    path.write_text(text)
    return load_flow_text(text, str(path))


async def record_chat(flow: Flow) -> list[Event]:
    """A run with a person's answer, an error and a retry."""
    log = MemoryLog("rec")
    runner = Runner(flow=flow, log=log)
    state = await runner.start()
    assert state.status == "paused"
    state = await runner.continue_("shorter please")
    assert state.status == "error"
    state = await runner.retry()
    assert state.status == "terminated"
    return log.load()
