"""``Refused``: a call that a built-in tool's limits do not allow."""

from __future__ import annotations


class Refused(Exception):
    """A call a built-in tool's limits do not allow; its text is the model's error result."""
