"""Text no log can hold (lone UTF-16 surrogates) is made valid before it reaches an event."""

from __future__ import annotations

from roost.events import valid_text

EMOJI = "\U0001f600"
HIGH, LOW = "\ud83d", "\ude00"  # the emoji's two UTF-16 halves


def test_pairs_are_joined_and_lone_halves_replaced() -> None:
    assert valid_text(f"a{HIGH}{LOW}b") == f"a{EMOJI}b"
    assert valid_text(f"bad{HIGH}!") == "bad\ufffd!"
    assert valid_text("plain") == "plain"
