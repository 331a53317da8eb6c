"""What an agent is shown when it replies (FLOW-LANGUAGE.md section 3).

Between two agents it sees the success messages between those two only, its
own as ``assistant`` and the other's as ``user``. Into a channel it sees every
success message addressed to the channel and those the channel addressed to it,
as one transcript of ``@name: content`` lines. Its ``context`` files are read
afresh at every reply and added to the last user message; with
``defaults.timestamps`` each user message starts with its recorded time.
"""

from __future__ import annotations

import glob
from collections.abc import Callable
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path

from roost.flow.models import Flow
from roost.messages import AssistantMessage, ChatMessage, UserMessage
from roost.nodes.views import LazyMessages
from roost.runstate import EMPTY_THREAD, HistoryEntry, RunState

TRANSCRIPT_HEADER = "The conversation in {channel} so far:"
TRANSCRIPT_ASK = (
    "Write your next message in this conversation as {name}. "
    "Do not introduce yourself and do not start with your name."
)


@dataclass(slots=True)
class Seen:
    """The history one reply is given: messages built lazily, and their chained digest."""

    messages: LazyMessages
    digest: bytes
    context: str


def seen_by(flow: Flow, state: RunState, speaker: str, to: str) -> Seen:
    """What ``speaker`` is shown when it replies to ``to`` (an agent or a channel)."""
    stamps = flow.defaults.timestamps
    agent = flow.agents.get(speaker)
    # read_context gives '' for an agent without context files: not called for those.
    context = read_context(flow, speaker) if agent is not None and agent.context else ""
    if to in flow.channels:
        build, digest = _channel_view(state, speaker, to, stamps)
    else:
        build, digest = _pair_view(state, speaker, to, stamps)
    if context:
        digest = sha256(digest + context.encode()).digest()
        plain = build

        def build() -> list[ChatMessage]:
            return _with_context(plain(), context)

    return Seen(LazyMessages(build), digest, context)


def _pair_view(
    state: RunState, speaker: str, other: str, stamps: bool
) -> tuple[Callable[[], list[ChatMessage]], bytes]:
    thread = state.pair_thread(speaker, other)
    count = len(thread.indices)
    history = state.history
    indices = thread.indices

    def build() -> list[ChatMessage]:
        messages: list[ChatMessage] = []
        for index in indices[:count]:
            entry = history[index]
            if entry.from_ == speaker:
                messages.append(AssistantMessage(content=entry.content))
            else:
                messages.append(UserMessage(content=_stamped(entry, stamps)))
        return messages

    return build, thread.digest


def _channel_view(
    state: RunState, member: str, channel: str, stamps: bool
) -> tuple[Callable[[], list[ChatMessage]], bytes]:
    # state.inbox_of and state.pair_thread, inlined: this runs once per channel reply.
    inbox = state.inbox.get(channel) or EMPTY_THREAD
    direct = state.pairs.get((member, channel) if member <= channel else (channel, member))
    if direct is None:
        direct = EMPTY_THREAD
    inbox_count, direct_count = len(inbox.indices), len(direct.indices)
    history = state.history

    def build() -> list[ChatMessage]:
        wanted = set(inbox.indices[:inbox_count])
        wanted.update(i for i in direct.indices[:direct_count] if history[i].from_ == channel)
        lines = [_line(history[i], stamps) for i in sorted(wanted)]
        text = "\n".join(
            [
                TRANSCRIPT_HEADER.format(channel=channel),
                *lines,
                "",
                TRANSCRIPT_ASK.format(name=member),
            ]
        )
        return [UserMessage(content=text)]

    return build, sha256(inbox.digest + direct.digest).digest()


def transcript(state: RunState, channel: str) -> list[str]:
    """The channel's conversation as ``@name: content`` lines (what a director is shown)."""
    history = state.history
    return [_line(history[i], False) for i in state.inbox_of(channel).indices]


def _line(entry: HistoryEntry, stamps: bool) -> str:
    line = f"@{entry.from_}: {entry.content}"
    return f"[{entry.ts}] {line}" if stamps else line


def _stamped(entry: HistoryEntry, stamps: bool) -> str:
    return f"[{entry.ts}] {entry.content}" if stamps else entry.content


def _with_context(messages: list[ChatMessage], context: str) -> list[ChatMessage]:
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if isinstance(message, UserMessage):
            messages[position] = UserMessage(content=f"{message.content}\n\n{context}")
            return messages
    messages.append(UserMessage(content=context))
    return messages


def read_context(flow: Flow, agent: str) -> str:
    """The agent's context files, read now, as one block of text ('' when it has none)."""
    patterns = flow.agents[agent].context if agent in flow.agents else []
    if not patterns:
        return ""
    folder = Path(flow.path).parent if flow.path and not flow.path.startswith("<") else Path()
    blocks: list[str] = []
    for pattern in patterns:
        matches = sorted(glob.glob(str(folder / pattern), recursive=True))
        if not matches:
            blocks.append(f"### {pattern}\n(no file matches)")
        for match in matches:
            blocks.append(
                f"### {Path(match).relative_to(folder) if folder.parts else match}\n"
                f"{_read(Path(match))}"
            )
    return "Context files (read just now):\n\n" + "\n\n".join(blocks)


def _read(path: Path) -> str:
    if not path.is_file():  # a folder, a FIFO or a device would block or never end
        return "(not a regular file: not read)"
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"(cannot read: {exc.strerror})"
