"""A model call's streamed text, masked on its way to the terminal: a secret split across chunks
is never shown."""

from __future__ import annotations

import pytest

from roost.engine.calls import MaskedStream
from roost.flow.redact import Redactor
from tests.engine.conftest import SECRET


def test_streamed_text_is_masked_even_when_a_secret_is_split_across_chunks() -> None:
    shown: list[str] = []
    stream = MaskedStream(shown.append, Redactor([SECRET]))
    for chunk in ("The key: sk-live-", "4242-very-", "secret, and ", "more text."):
        stream(chunk)
    stream.flush()
    assert "".join(shown) == "The key: ***, and more text."
    assert all(SECRET[:8] not in part for part in shown)


# A long secret's first or last eight characters are masked on their own; a secret of
# eight characters or fewer is masked only whole, so only what is held back keeps it.
@pytest.mark.parametrize("secret", [SECRET, "hunter42"])
def test_a_secret_split_at_any_point_of_two_chunks_is_never_shown(secret: str) -> None:
    text = f"The key: {secret}, and more text."
    for cut in range(len(text) + 1):
        shown: list[str] = []
        stream = MaskedStream(shown.append, Redactor([secret]))
        stream(text[:cut])
        stream(text[cut:])
        stream.flush()
        assert "".join(shown) == "The key: ***, and more text.", f"split at {cut}"
