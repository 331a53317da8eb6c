"""A secret is masked also when a text shows only its start or its end, or hides it
behind characters that show nothing; and masked before any text is shortened."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from roost.engine.calls import MaskedStream
from roost.flow.redact import Redactor

SECRET = "sk-live-4242-very-secret"
redact = Redactor([SECRET])


def test_the_start_or_the_end_of_a_secret_is_masked() -> None:
    assert redact(f"key {SECRET[:12]}… (cut)") == "key ***… (cut)"
    assert redact(f"…{SECRET[-9:]} was the key") == "…*** was the key"
    # Both ends of one secret around other text, and the secret twice in a row.
    assert redact(f"{SECRET[-8:]} / {SECRET[:8]}") == "*** / ***"
    assert redact(SECRET + SECRET) == "******"


def test_fewer_than_eight_characters_of_a_secret_stay() -> None:
    # "sk-live" begins many keys and words: a piece that short says nothing of the key.
    assert redact("an sk-live key") == "an sk-live key"
    assert redact("secret") == "secret"


def test_a_url_secret_masks_its_affixes_but_never_the_scheme() -> None:
    url = "postgresql://admin:hunter2hunter2@db.internal:5432/app"
    masking = Redactor([url])
    assert masking("see postgresql://other.host/app") == "see postgresql://other.host/app"
    assert masking("login admin:hunter2hu…") == "login ***:***…"  # each piece masked


def test_a_secret_split_by_characters_that_show_nothing_is_masked() -> None:
    for invisible in ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"):
        hidden = invisible.join(SECRET)
        assert redact(f"the key is {hidden}!") == "the key is ***!"
    assert redact("key sk-\u200blive-4242-very…") == "key ***…"


def test_only_the_invisible_characters_inside_a_secret_are_dropped() -> None:
    assert redact(f"a\u00ad {SECRET}\u200b!") == "a\u00ad ***\u200b!"
    assert redact(f"x\u200d{SECRET[:5]}\u200b{SECRET[5:]}") == "x\u200d***"


def test_invisible_characters_without_a_secret_are_left_alone() -> None:
    family = "👩\u200d👩\u200d👧"
    assert redact(f"hello {family}") == f"hello {family}"


@settings(max_examples=200, deadline=None)
@given(
    before=st.text(max_size=30),
    after=st.text(max_size=30),
    cuts=st.lists(st.integers(0, 90), max_size=8),
)
# A character that shows nothing before the secret stays, in the stream as in the whole.
@example(before="\xad0000000000000000", after="", cuts=[24])
def test_a_stream_shows_exactly_what_the_whole_masked_text_is(
    before: str, after: str, cuts: list[int]
) -> None:
    """However the text is cut into chunks, the chunks shown join into the masked whole."""
    text = before + SECRET + after
    shown: list[str] = []
    stream = MaskedStream(shown.append, redact)
    start = 0
    for cut in sorted(cuts):
        stream(text[start:cut])
        start = max(start, cut)
    stream(text[start:])
    stream.flush()
    assert "".join(shown) == redact(text)
    assert all(SECRET[:8] not in part and SECRET[-8:] not in part for part in shown)
