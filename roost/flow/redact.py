"""Keeping values read from the environment out of messages, events and pictures."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MASK = "***"
_SHORT = 4  # shorter values are masked only as whole words, so "1" does not eat "10"


class Redactor:
    """Replaces every secret in a text with ``***``: the longest first, short ones as words.

    Made once per flow (the secrets are fixed when it is loaded), so the order
    and the patterns are worked out once rather than at every text.
    """

    __slots__ = ("_long", "_short", "secrets")

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))
        self._long = tuple(s for s in self.secrets if len(s) >= _SHORT)
        short = [re.escape(s) for s in self.secrets if len(s) < _SHORT]
        self._short = re.compile(rf"(?<![\w-])(?:{'|'.join(short)})(?![\w-])") if short else None

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def __call__(self, text: str) -> str:
        for secret in self._long:
            if secret in text:
                text = text.replace(secret, MASK)
        if self._short is not None:
            text = self._short.sub(MASK, text)
        return text

    def deep(self, value: Any) -> Any:
        """``value`` with every string inside it (dicts, lists, tuples) redacted."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {key: self.deep(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.deep(item) for item in value)
        return value


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced by ``***`` (longest first)."""
    return Redactor(secrets)(text)


def clean(text: str, secrets: Iterable[str]) -> str:
    """``text`` with secrets masked and line breaks escaped, fit for one output line."""
    masked = redact(text, secrets)
    return "".join(ch if ch.isprintable() or ch == " " else repr(ch)[1:-1] for ch in masked)
