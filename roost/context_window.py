"""What compaction made of each node's view of its history, and how big a view is.

A node's *view* is what it is shown when it answers one other node: the
messages of a pair, or a channel's transcript, then the tool rounds of the
reply in progress. Compaction changes a view, never the log: ``compact``
events say what each view leaves out, and the fold (``roost.runstate``) keeps
one ``ViewBase`` per (node, whom it answers).

A view's size is counted in characters (each message's text plus a little
for its framing), kept as running sums in the state, so that no reply
measures the history again. Tokens are estimated from characters: the
latest reported size of the same view plus what was added since, divided by
the provider's characters per token, calibrated from the usage it reported.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from roost.messages import AssistantMessage, ReasoningPart, ToolResultMessage

if TYPE_CHECKING:
    from collections.abc import Sequence

ENTRY_OVERHEAD = 8  # characters counted per message beyond its text: its role and framing
# Characters an image counts for: about the 1,600 tokens Anthropic charges for a picture of
# about a megapixel (OpenAI's high detail costs less); a model's reported usage corrects it.
IMAGE_CHARS = 6400
CHARS_PER_TOKEN = 4.0  # before a provider has reported usage
_CALIBRATED_AFTER = 200  # tokens of reported growth before a provider's own ratio is used
_RATIO_BOUNDS = (1.0, 12.0)

SUMMARY_HEAD = "[Summary of the earlier conversation]"
CUT_NOTE = "[{count} earlier messages were left out to fit the context window.]"
TRIM_KEEP = 200  # characters of a trimmed tool result still shown
TRIM_NOTE = "\n[trimmed to fit the context window: {left} of {total} characters left out]"
REASONING_NOTE = "[reasoning trimmed to fit the context window]"


def entry_size(frm: str, content: str, images: int = 0) -> int:
    """The characters one history entry (with ``images`` images) counts for in a view."""
    return len(content) + len(frm) + ENTRY_OVERHEAD + IMAGE_CHARS * images


@dataclass(slots=True)
class ViewBase:
    """What compaction made of one node's view of one conversation, and its latest size.

    The first ``covered`` entries of the conversation are replaced, all but the
    very first (always shown), by ``summary`` or, after a cut, by a note saying
    how many were left out. Tool results and plain reasoning of the reply in
    progress up to seq ``trimmed`` are cut to a note.

    ``anchor_tokens`` is the latest known size of the view's request (a call's
    reported prompt tokens, or a compaction's estimate) and ``anchor_chars``
    the view's size in characters then; ``reported`` says which, ``plain`` that the
    view held no tool rounds then (only such sizes calibrate: tool results are counted
    whole here, and may be shown cut).
    """

    covered: int = 0
    through: int = -1
    summary: str | None = None
    stage: str = ""
    trimmed: int = -1
    anchor_tokens: int = 0
    anchor_chars: int = -1
    reported: bool = False
    plain: bool = False  # the anchor was measured with no tool rounds in the view

    def placeholder(self) -> str:
        """The text standing where the covered entries (all but the first) were; '' if none."""
        if self.covered <= 1:
            return ""
        if self.summary is not None:
            return f"{SUMMARY_HEAD}\n{self.summary}"
        return CUT_NOTE.format(count=self.covered - 1)


@dataclass(slots=True)
class Calibration:
    """A provider's characters per token, learnt from the growth of its reported prompts."""

    chars: int = 0
    tokens: int = 0

    def add(self, chars: int, tokens: int) -> None:
        self.chars += chars
        self.tokens += tokens

    def ratio(self) -> float:
        """Characters per token: the provider's own once it has reported enough."""
        if self.tokens < _CALIBRATED_AFTER:
            return CHARS_PER_TOKEN
        low, high = _RATIO_BOUNDS
        return min(max(self.chars / self.tokens, low), high)


def thread_chars(sizes: Sequence[int], base: ViewBase | None) -> int:
    """The characters of a conversation whose running sums are ``sizes``, as ``base`` shows it."""
    if not sizes:
        return 0
    total = sizes[-1]
    if base is None or base.covered <= 1:
        return total
    covered = min(base.covered, len(sizes))
    shown = sizes[0] + (total - sizes[covered - 1])
    return shown + len(base.placeholder()) + ENTRY_OVERHEAD


def tail_chars(
    messages: Sequence[AssistantMessage | ToolResultMessage], seqs: Sequence[int], trimmed: int
) -> int:
    """The characters of a reply's tool rounds, trimmed up to seq ``trimmed``."""
    total = 0
    for message, seq in zip(messages, seqs, strict=False):
        total += ENTRY_OVERHEAD
        if isinstance(message, ToolResultMessage):
            total += len(trim_result(message.content) if seq <= trimmed else message.content)
            continue
        total += len(message.content)
        for call in message.tool_calls:
            total += len(call.name) + len(call.raw_arguments or json.dumps(call.arguments))
        for part in message.reasoning:
            total += len(trim_reasoning(part).text if seq <= trimmed else part.text)
    return total


def trim_result(content: str) -> str:
    """A tool result as trimming leaves it: its start and a note of what was left out."""
    if len(content) <= TRIM_KEEP + len(TRIM_NOTE) + 12:
        return content
    left = len(content) - TRIM_KEEP
    return content[:TRIM_KEEP] + TRIM_NOTE.format(left=left, total=len(content))


def trim_reasoning(part: ReasoningPart) -> ReasoningPart:
    """Reasoning as trimming leaves it: plain text cut to a note; signed or opaque parts,
    which their API wants back unchanged, as they are."""
    if part.signature or part.data or len(part.text) <= len(REASONING_NOTE):
        return part
    return part.model_copy(update={"text": REASONING_NOTE})


def trimmable(messages: Sequence[AssistantMessage | ToolResultMessage], seqs: Sequence[int]) -> int:
    """The seq up to which trimming a reply's tool rounds would change something, or -1.

    Only rounds before the latest are trimmed: the latest results are what the
    model is answering, and the latest reasoning goes back unchanged.
    """
    last_answer = -1
    for message, seq in zip(messages, seqs, strict=False):
        if isinstance(message, AssistantMessage):
            last_answer = seq
    found = -1
    for message, seq in zip(messages, seqs, strict=False):
        if seq >= last_answer:
            break
        if isinstance(message, ToolResultMessage):
            if trim_result(message.content) != message.content:
                found = seq
        elif any(trim_reasoning(part) != part for part in message.reasoning):
            found = seq
    return found


def estimate(base: ViewBase | None, chars: int, fixed_chars: int, ratio: float) -> int:
    """The tokens of a request whose view counts ``chars`` characters.

    From the view's latest known size when there is one (what was added since
    is estimated); else from everything, ``fixed_chars`` (the system prompt,
    the tools, context files) included.
    """
    if base is not None and base.anchor_chars >= 0:
        return max(0, base.anchor_tokens + math.ceil((chars - base.anchor_chars) / ratio))
    return math.ceil((fixed_chars + chars) / ratio)


# How servers say the limit they refused a request against; the group is the limit in tokens.
_LIMIT_SAID = [
    # OpenAI, and the servers that copy its wording (vLLM, LiteLLM, DeepSeek, Mistral, ...)
    r"maximum context length is (\d[\d,]*) tokens",
    # Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
    r"> ?(\d[\d,]*) maximum",
    # Anthropic: "input length and `max_tokens` exceed context limit: 199000 + 21333 > 200000"
    r"exceed context limit: [\d,]+ \+ [\d,]+ > (\d[\d,]*)",
    # llama.cpp: "exceeds the available context size (4096 tokens)", or "(n_ctx: 4096)"
    r"context size \((\d[\d,]*) tokens\)",
    r"n_ctx[=: ]+(\d[\d,]*)",
    # Gemini's OpenAI endpoint: "exceeds the maximum number of tokens allowed (1048576)"
    r"maximum number of tokens allowed \((\d[\d,]*)\)",
    # LM Studio, Ollama and others: "a context length of only 4096 tokens", "context window
    # of 8192 tokens", "context length of 8192"
    r"context (?:length|window|size) (?:is |of )?(?:only )?(\d[\d,]*)(?: tokens)?",
    # Text Generation Inference, Together: "`inputs` tokens + `max_new_tokens` must be <= 8193"
    r"must be <= (\d[\d,]*)",
]
_LIMIT_PATTERN = re.compile("|".join(f"(?:{said})" for said in _LIMIT_SAID), re.IGNORECASE)
_SMALLEST_LIMIT = 256  # below this, a number in a refusal is not a window (a count, a code)


def limit_in(refusal: str) -> int | None:
    """The context window a server's too-long refusal names, in tokens; None when it names
    none (pure: the same text always gives the same limit, so a replay learns the same)."""
    for match in _LIMIT_PATTERN.finditer(refusal):
        number = next(group for group in match.groups() if group is not None)
        limit = int(number.replace(",", ""))
        if limit >= _SMALLEST_LIMIT:
            return limit
    return None
