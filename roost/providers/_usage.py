"""Token counts as a provider reports them, checked before they reach a run.

A server may put anything in its usage: ``10**20``, a negative count, ``12.5``,
a string, ``null``. One absurd number must not crash a run, overflow the
store's integers or poison the run's totals, so every count is made a whole
number between 0 and ``MAX_TOKENS`` here, at the edge, and every correction
is noted (the note is recorded with the call) instead of raised.
"""

from __future__ import annotations

import math

from roost.messages import Usage

# Far beyond any model's context window, and a million calls of it still sum below
# 2**53, the largest integer JSON readers (the run page among them) keep exactly.
MAX_TOKENS = 10**9
_SHOWN = 40  # characters of a strange value quoted in a note


class UsageCheck:
    """Reads usage counts one by one, correcting each and noting what it corrected."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def __call__(self, name: str, value: object) -> int:
        """``value`` as a count of tokens: an int in ``0..MAX_TOKENS``."""
        fixed = _count(value)
        if fixed is None or fixed < 0 or fixed > MAX_TOKENS:
            kept = 0 if fixed is None or fixed < 0 else MAX_TOKENS
            self._note(name, value, kept)
            return kept
        if not _plain_int(value) and value is not None:
            self._note(name, value, fixed)
        return fixed

    def usage(self, prompt: int, completion: int, cached: int, reasoning: int) -> Usage:
        """A Usage of counts already read with this check (a sum is clamped again)."""
        return Usage(
            prompt_tokens=min(prompt, MAX_TOKENS),
            completion_tokens=min(completion, MAX_TOKENS),
            cached_tokens=min(cached, MAX_TOKENS),
            reasoning_tokens=min(reasoning, MAX_TOKENS),
        )

    def _note(self, name: str, value: object, kept: int) -> None:
        self.notes.append(
            f"the provider reported usage {name}={_shown(value)}, which cannot be a token "
            f"count; recorded as {kept}"
        )


def _plain_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: object) -> int | None:
    """The whole number ``value`` stands for, or None when it stands for none."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return round(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            return _count(float(value.strip()))
        except ValueError:
            return None
    return None


def _shown(value: object) -> str:
    # repr() of an int of thousands of digits raises; such a number is only "huge".
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**18:
        return "-(more than 10**18)" if value < 0 else "more than 10**18"
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
