"""Keeping values read from the environment out of messages."""

from __future__ import annotations

import re
from collections.abc import Iterable

MASK = "***"
_SHORT = 4  # shorter values are masked only as whole words, so "1" does not eat "10"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced by ``***`` (longest first)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if not secret:
            continue
        if len(secret) >= _SHORT:
            text = text.replace(secret, MASK)
        else:
            text = re.sub(rf"(?<![\w-]){re.escape(secret)}(?![\w-])", MASK, text)
    return text


def clean(text: str, secrets: Iterable[str]) -> str:
    """``text`` with secrets masked and line breaks escaped, fit for one output line."""
    masked = redact(text, secrets)
    return "".join(ch if ch.isprintable() or ch == " " else repr(ch)[1:-1] for ch in masked)
