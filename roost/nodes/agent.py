"""What an agent is shown when it replies (docs/semantics.md).

Between two agents it sees the success messages between those two only, its
own as ``assistant`` and the other's as ``user``. Into a channel it sees every
success message addressed to the channel and those the channel addressed to it,
as one transcript of ``@name: content`` lines. Its ``context`` files are read
afresh at every reply and added to the last user message; with
``defaults.timestamps`` each user message starts with its recorded time.

The view's digest covers everything its messages are built from: the entries
shown (chained message by message in the state, so no reply rehashes the
history), who speaks, the texts that frame them, their times when they are
shown, and the context files' text. Equal digests, equal messages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from hashlib import sha256
from typing import TYPE_CHECKING, NamedTuple, overload

from roost.errors import RoostError
from roost.flow.skills import SKILL_READ_WIRE, agent_skills
from roost.messages import AssistantMessage, ChatMessage, ImagePart, UserMessage
from roost.nodes.context import read_context
from roost.nodes.roles import agent_system
from roost.nodes.views import LazyMessages
from roost.runstate import EMPTY_THREAD, HistoryEntry, RunState

if TYPE_CHECKING:
    from roost.context_window import ViewBase
    from roost.events import ImageRecord, MemoryEntry, SkillInfo
    from roost.flow.models import Flow

TRANSCRIPT_HEADER = "The conversation in {channel} so far:"
TRANSCRIPT_ASK = (
    "Write your next message in this conversation as {name}. "
    "Do not introduce yourself and do not start with your name."
)
LINE = "@{name}: {content}"
STAMPED = "[{ts}] {text}"
CONTEXT_AFTER = "{text}\n\n{context}"

# The texts that frame the messages of a view, and how they are laid out: a change to
# any of them (or to the layout, whose version is the last item) changes every digest.
_FRAMING = sha256(
    repr((TRANSCRIPT_HEADER, TRANSCRIPT_ASK, LINE, STAMPED, CONTEXT_AFTER, 1)).encode()
).digest()


class ViewDigest(NamedTuple):
    """What a view's messages are built from, digested: ``full`` (the bytes the request's
    digest takes in, short whatever the history's length) covers them as sent; ``legacy``
    is the digest roost made before (the entries shown and the context text only), kept
    so that a replay compares a run recorded then the way it was recorded."""

    full: bytes
    legacy: bytes


@dataclass(slots=True)
class Seen:
    """The history one reply is given: messages built lazily, and their chained digest."""

    messages: LazyMessages
    digest: ViewDigest
    context: str


# Gives an image's bytes for a message's record of it (images package): the engine reads
# them from the run's image store, and raises a RoostError for one the store lacks.
ImageSource = Callable[["ImageRecord"], ImagePart]


def seen_by(
    flow: Flow, state: RunState, speaker: str, to: str, images: ImageSource | None = None
) -> Seen:
    """What ``speaker`` is shown when it replies to ``to`` (an agent or a channel).

    ``images`` gives the bytes of the images messages carry; without it they are left out.
    """
    stamps = flow.defaults.timestamps
    agent = flow.agents.get(speaker)
    # read_context gives '' for an agent without context files: not called for those.
    context = read_context(flow, speaker) if agent is not None and agent.context else ""
    base = state.views.get((speaker, to))
    if base is not None and base.covered <= 1:
        base = None  # only a size is known of this view: it shows every entry
    history, rewrites = _view_history(state, speaker)
    if to in flow.channels:
        build, digest = _channel_view(state, history, speaker, to, stamps, base, images)
    else:
        build, digest = _pair_view(state, history, speaker, to, stamps, base, images)
    if rewrites:
        digest = ViewDigest(
            digest.full + b"\x1erewrites\x1e" + rewrites,
            sha256(digest.legacy + rewrites).digest(),
        )
    if context:
        text = context.encode()
        digest = ViewDigest(
            digest.full + b"\x1econtext\x1e" + sha256(text).digest(),
            sha256(digest.legacy + text).digest(),
        )
        plain = build

        def build() -> list[ChatMessage]:
            return _with_context(plain(), context)

    return Seen(LazyMessages(build), digest, context)


class _Rewritten(Sequence[HistoryEntry]):
    """The history as one agent's view shows it: the messages its before_reply hooks
    rewrote hold the new text (the log keeps what was said)."""

    def __init__(self, history: list[HistoryEntry], rewrites: dict[int, str]) -> None:
        self._history = history
        self._rewrites = rewrites

    @overload
    def __getitem__(self, index: int) -> HistoryEntry: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[HistoryEntry]: ...

    def __getitem__(self, index: int | slice) -> HistoryEntry | Sequence[HistoryEntry]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._history)))]
        entry = self._history[index]
        text = self._rewrites.get(entry.seq)
        return entry if text is None else entry.model_copy(update={"content": text})

    def __len__(self) -> int:
        return len(self._history)


def _view_history(state: RunState, speaker: str) -> tuple[Sequence[HistoryEntry], bytes]:
    """The history ``speaker`` is shown, and the digest of its rewrites (b"" when none)."""
    chained = state.rewrite_digests.get(speaker)
    if chained is None:
        return state.history, b""
    rewrites = {seq: text for (node, seq), text in state.rewrites.items() if node == speaker}
    return _Rewritten(state.history, rewrites), chained


RECALLED = "Remembered from earlier conversations:\n{entries}"


def recall_text(entries: Sequence[MemoryEntry]) -> str:
    """How recalled memory entries are shown to a model, after the latest message."""
    return RECALLED.format(entries="\n".join(f"- {e.key}: {e.content}" for e in entries))


def with_recall(seen: Seen, entries: Sequence[MemoryEntry]) -> Seen:
    """``seen`` with ``entries`` added to its latest user message (as context files are)."""
    if not entries:
        return seen
    text = recall_text(entries)
    digest = seen.digest
    digest = ViewDigest(
        digest.full + b"\x1erecall\x1e" + sha256(text.encode()).digest(),
        sha256(digest.legacy + b"recall" + text.encode()).digest(),
    )
    plain = seen.messages

    def build() -> list[ChatMessage]:
        return _with_context(list(plain), text)

    return Seen(LazyMessages(build), digest, seen.context)


MEMORY_NOTE = "You have a memory that lasts across conversations: call {uses}."
# What each built-in memory tool is for, as the note says it (in this order).
MEMORY_USES = {
    "store": "memory__store to remember a fact or preference for later",
    "recall": "memory__recall to look up what you remembered",
    "forget": "memory__forget to remove an entry that no longer holds",
    "timeline_recall": "memory__timeline_recall to find summaries of earlier "
    "conversations by words and dates",
}


def memory_note(flow: Flow, agent: str) -> str:
    """The sentence telling ``agent``'s model which memory tools it has; '' for none.

    Only the built-in tools the agent lists under ``functions`` are named (none when
    the flow has no ``memory:`` section, or a tool entry of its own called memory).
    """
    config = flow.agents.get(agent)
    if flow.memory is None or "memory" in flow.tools or config is None:
        return ""
    listed = set()
    for reference in config.functions:
        parent, _, child = reference.removeprefix("@@").strip().partition("#")
        if parent == "memory":
            listed.add(child)
    uses = [use for name, use in MEMORY_USES.items() if name in listed]
    if not uses:
        return ""
    joined = uses[0] if len(uses) == 1 else f"{', '.join(uses[:-1])} and {uses[-1]}"
    return MEMORY_NOTE.format(uses=joined)


def with_memory_note(system: str, note: str) -> str:
    """The system prompt ``system`` with the memory ``note`` after it, as the model is sent."""
    if not note:
        return system
    return f"{system}\n\n{note}" if system else note


# skills: listed by name in the system prompt, read whole only when a task needs one ---

SKILLS = (
    "You have skills: instructions for particular tasks, kept apart until a task needs "
    "them. When a task matches a skill's description, call the tool {tool} with the "
    "skill's name to read its instructions, then follow them.\nSkills:\n{lines}"
)


def skills_text(skills: Sequence[SkillInfo], tool: str) -> str:
    """The part of a system prompt that lists ``skills`` (name: description) and ``tool``."""
    lines = "\n".join(f"- {skill.name}: {skill.description}" for skill in skills)
    return SKILLS.format(tool=tool, lines=lines)


def with_skills(system: str, skills: Sequence[SkillInfo], tool: str) -> str:
    """``system`` followed by the list of ``skills`` (``system`` itself when there are none)."""
    if not skills:
        return system
    listed = skills_text(skills, tool)
    return f"{system}\n\n{listed}" if system else listed


def system_prompt(
    flow: Flow,
    state: RunState,
    agent: str,
    to: str,
    *,
    note: str,
    skills: Callable[[], Sequence[SkillInfo]],
    strict: bool = True,
) -> str:
    """The system prompt ``agent`` is sent when it answers ``to``: its role rendered, then
    the memory ``note`` and the list of the skills ``skills()`` gives.

    The one place it is put together, so that a request, ``/compact`` and the context
    estimate count the same text. ``skills`` is asked only once the role has rendered
    (a live run records the list it finds). Not ``strict``, a role that does not render
    (an estimate made of a run the flow no longer fits) stands as written.
    """
    try:
        system = agent_system(flow, state, agent, to)
    except RoostError:
        if strict:
            raise
        system = flow.agents[agent].role
    listed = skills() if flow.agents[agent].skills else ()
    return with_skills(with_memory_note(system, note), listed, SKILL_READ_WIRE)


def shown_skills(flow: Flow, state: RunState, agent: str) -> tuple[SkillInfo, ...]:
    """The skills ``agent``'s system prompt lists by the run's latest ``skills`` event
    (none when that event lacks one it lists)."""
    try:
        return agent_skills(flow, agent, state.skills or ())
    except RoostError:
        return ()


def _view_digest(
    kind: bytes, speaker: str, to: str, shown: bytes, times: bytes, base: ViewBase | None
) -> bytes:
    """The ``full`` digest of a view from the digest of the entries it shows."""
    names = f"{speaker}\x1f{to}".encode()
    parts = [_FRAMING, kind, names, b"\x1e", shown, times]
    if base is not None:  # compacted: which entries it replaces, and with what
        placeholder = sha256(base.placeholder().encode()).digest()
        parts += [b"\x1ecompacted\x1e", str(base.through).encode(), b"\x1f", placeholder]
    return b"".join(parts)


def _shown(
    state: RunState, indices: list[int], count: int, base: ViewBase | None
) -> tuple[list[int], str]:
    """The entries of ``indices[:count]`` a view shows, and the text that stands for the rest."""
    if base is None:
        return indices[:count], ""
    history = state.history
    # The first entry, then those after the last one the compaction covers.
    later = [i for i in indices[:count] if history[i].seq > base.through]
    first = indices[:1] if count and history[indices[0]].seq <= base.through else []
    return first + later, base.placeholder()


def _pair_view(
    state: RunState,
    history: Sequence[HistoryEntry],
    speaker: str,
    other: str,
    stamps: bool,
    base: ViewBase | None,
    images: ImageSource | None,
) -> tuple[Callable[[], list[ChatMessage]], ViewDigest]:
    thread = state.pair_thread(speaker, other)
    count = len(thread.indices)
    indices = thread.indices

    def build() -> list[ChatMessage]:
        shown, placeholder = _shown(state, indices, count, base)
        messages: list[ChatMessage] = []
        for position, index in enumerate(shown):
            if position == 1 and placeholder:
                messages.append(UserMessage(content=placeholder))
            entry = history[index]
            if entry.from_ == speaker:
                messages.append(AssistantMessage(content=entry.content))
            else:
                parts = _images_of([entry], images)
                messages.append(UserMessage(content=_stamped(entry, stamps), images=parts))
        return messages

    times = b"\x1etimes\x1e" + thread.times_digest(state.history) if stamps else b""
    full = _view_digest(b"pair\x1e", speaker, other, thread.digest, times, base)
    return build, ViewDigest(full, thread.digest)


def _channel_view(
    state: RunState,
    history: Sequence[HistoryEntry],
    member: str,
    channel: str,
    stamps: bool,
    base: ViewBase | None,
    images: ImageSource | None,
) -> tuple[Callable[[], list[ChatMessage]], ViewDigest]:
    # state.inbox_of and state.pair_thread, inlined: this runs once per channel reply.
    inbox = state.inbox.get(channel) or EMPTY_THREAD
    direct = state.pairs.get((member, channel) if member <= channel else (channel, member))
    if direct is None:
        direct = EMPTY_THREAD
    inbox_count, direct_count = len(inbox.indices), len(direct.indices)

    def build() -> list[ChatMessage]:
        wanted = set(inbox.indices[:inbox_count])
        wanted.update(i for i in direct.indices[:direct_count] if history[i].from_ == channel)
        ordered = sorted(wanted)
        kept, placeholder = _shown(state, ordered, len(ordered), base)
        lines = [_line(history[i], stamps) for i in kept]
        if placeholder and lines:
            lines.insert(1, placeholder)
        text = "\n".join(
            [
                TRANSCRIPT_HEADER.format(channel=channel),
                *lines,
                "",
                TRANSCRIPT_ASK.format(name=member),
            ]
        )
        parts = _images_of([history[i] for i in kept], images)
        return [UserMessage(content=text, images=parts)]

    shown = sha256(inbox.digest + direct.digest).digest()
    times = b""
    if stamps:
        times = b"\x1etimes\x1e" + inbox.times_digest(state.history)
        times += direct.times_digest(state.history)
    full = _view_digest(b"channel\x1e", member, channel, shown, times, base)
    return build, ViewDigest(full, shown)


def transcript(state: RunState, channel: str) -> list[str]:
    """The channel's conversation as ``@name: content`` lines (what a director is shown)."""
    return list(state.inbox_of(channel).lines(state.history, _plain_line)[0])


def transcript_text(state: RunState, channel: str) -> str:
    """The transcript's lines joined, each ending in a newline ('' before any message).

    Kept with the channel's thread and extended by the new messages only, so a
    director's prompt costs the run's length once, not once per choice.
    """
    return state.inbox_of(channel).lines(state.history, _plain_line)[1]


def _plain_line(entry: HistoryEntry) -> str:
    return LINE.format(name=entry.from_, content=entry.content)


def _line(entry: HistoryEntry, stamps: bool) -> str:
    line = LINE.format(name=entry.from_, content=entry.content)
    return STAMPED.format(ts=entry.ts, text=line) if stamps else line


def _stamped(entry: HistoryEntry, stamps: bool) -> str:
    return STAMPED.format(ts=entry.ts, text=entry.content) if stamps else entry.content


def _images_of(
    entries: Sequence[HistoryEntry], images: ImageSource | None
) -> tuple[ImagePart, ...]:
    """The images of ``entries``' messages, in order, as a request sends them."""
    if images is None:
        return ()
    return tuple(
        images(record) for entry in entries for record in getattr(entry, "images", None) or ()
    )


def _with_context(messages: list[ChatMessage], context: str) -> list[ChatMessage]:
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if isinstance(message, UserMessage):
            text = CONTEXT_AFTER.format(text=message.content, context=context)
            messages[position] = message.model_copy(update={"content": text})
            return messages
    messages.append(UserMessage(content=context))
    return messages
