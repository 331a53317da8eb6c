"""Keeping values read from the environment out of messages, events and pictures."""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable

MASK = "***"
_SHORT = 4  # shorter values are masked only as whole words, so "1" does not eat "10"
# Where a secret may be cut when it is part of a URL, a command line or a quoted text:
# a parser that stops at one of these quotes the piece before it ("Invalid port: 'sk-x'").
_DELIMITERS = re.compile(r"""[/@:?#&= '"\\]+""")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")  # "https://": no secret, not a piece
# A secret's first or last characters, this many or more, are masked on their own: a
# text cut in the middle of a secret (by a length limit, say) shows one of them.
_AFFIX = 8
# Characters that show nothing: a secret with these between its letters reads the same.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")


def forms(secret: str) -> set[str]:
    """The ways ``secret`` can show in a text: itself, escaped, and its longer pieces.

    Escaped means the body of its ``repr()`` and of its JSON string, as messages
    quote values (``'pass\\'word'``); the pieces are the parts between URL, space
    and quote delimiters that are at least 4 characters long, as a URL or shell
    parser that stops at a delimiter shows only one part. The scheme of a value
    that is a URL is no piece: "http" is in too many texts to be masked.
    """
    found = {secret, repr(secret)[1:-1], json.dumps(secret)[1:-1]}
    found.add(json.dumps(secret, ensure_ascii=False)[1:-1])
    pieces = _DELIMITERS.split(_SCHEME.sub("", secret, count=1))
    found.update(part for part in pieces if len(part) >= _SHORT)
    return found


class Redactor:
    """Replaces every secret in a text with ``***``: the longest first, short ones as words.

    A secret is also masked in its escaped forms and in its pieces (see ``forms``).
    Made once per flow (the secrets are fixed when it is loaded), so the order
    and the patterns are worked out once rather than at every text.
    """

    __slots__ = ("_affixed", "_long", "_probes", "_short", "_short_words", "secrets")

    def __init__(self, secrets: Iterable[str]) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))
        long: set[str] = set()
        short: set[str] = set()
        for secret in self.secrets:
            if len(secret) >= _SHORT:
                long.update(forms(secret))
            else:  # a short value and its escaped forms stay whole words
                short.update({secret, repr(secret)[1:-1], json.dumps(secret)[1:-1]})
        self._long = tuple(sorted(long, key=lambda s: (-len(s), s)))
        # Every form holds one of these (a piece, or itself): a text without any of
        # them, as most are, is looked through once per probe rather than per form.
        self._probes = tuple(p for p in long if not any(q in p for q in long if q != p))
        self._short_words = tuple(sorted(short, key=lambda s: (-len(s), s)))
        words = "|".join(re.escape(s) for s in self._short_words)
        self._short = re.compile(rf"(?<![\w-])(?:{words})(?![\w-])") if short else None
        # The forms cut short too (a URL's scheme is no part of a secret's start).
        bodies = {_SCHEME.sub("", form, count=1) for form in long}
        self._affixed = tuple(sorted((b for b in bodies if len(b) > _AFFIX), key=len, reverse=True))

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def __call__(self, text: str) -> str:
        if _INVISIBLE.search(text) is None:
            return self._mask(text)
        # A secret may hide behind characters that show nothing ("sk\u200b-abc..."): a
        # text that holds one once they are gone loses them, and the secret is masked.
        bare = _INVISIBLE.sub("", text)
        unveiled = self._mask(bare)
        if unveiled == bare:
            return self._mask(text)
        return _restore_invisibles(text, bare, unveiled)

    def _mask(self, text: str) -> str:
        for probe in self._probes:
            if probe in text:
                for secret in self._long:
                    if secret in text:
                        text = text.replace(secret, MASK)
                break
        # Whole forms first (escaped ones included), then what is left of a cut one.
        for body in self._affixed:
            if body[:_AFFIX] in text or body[-_AFFIX:] in text:
                text = _mask_affixes(text, body)
        if self._short is not None:
            for word in self._short_words:
                if word in text:  # the pattern only where it could match: most texts skip it
                    return self._short.sub(MASK, text)
        return text

    def deep(self, value: Any) -> Any:
        """``value`` with every string inside it (dicts, lists, tuples) redacted."""
        from roost.events import map_texts  # the event models: not for validating a flow

        return map_texts(value, self)


def _mask_affixes(text: str, body: str) -> str:
    """``text`` with each run of ``_AFFIX`` or more characters that begins or ends
    ``body`` masked, wherever the text stops following it (a cut, other text)."""
    head, tail = body[:_AFFIX], body[-_AFFIX:]
    start = text.find(head)
    while start != -1:
        end = start + _AFFIX
        while end < len(text) and end - start < len(body) and text[end] == body[end - start]:
            end += 1
        text = text[:start] + MASK + text[end:]
        start = text.find(head, start + len(MASK))
    end = text.rfind(tail)
    while end != -1:
        stop = end + _AFFIX
        start = end
        while start > 0 and stop - start < len(body) and text[start - 1] == body[start - stop - 1]:
            start -= 1
        text = text[:start] + MASK + text[stop:]
        end = text.rfind(tail, 0, start)
    return text


def _restore_invisibles(text: str, bare: str, unveiled: str) -> str:
    """``unveiled`` (``bare`` masked) with the invisible characters of ``text`` put back
    wherever they were outside a masked secret: only the ones a secret hid behind go.

    Kept outside, the masked text reads as its parts masked apart do, so a stream
    that shows it chunk by chunk shows the same characters as the whole.
    """
    at = [i for i, ch in enumerate(text) if _INVISIBLE.fullmatch(ch) is None]
    pieces: list[str] = []
    done = 0  # where in ``text`` the pieces so far end
    matcher = SequenceMatcher(None, bare, unveiled, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i1 == i2:  # only new text: nothing of ``text`` to put back
            pieces.append(unveiled[j1:j2])
            continue
        pieces.append(text[done : at[i1]])  # the invisible ones between the two parts
        pieces.append(text[at[i1] : at[i2 - 1] + 1] if tag == "equal" else unveiled[j1:j2])
        done = at[i2 - 1] + 1
    pieces.append(text[done:])
    return "".join(pieces)


@lru_cache(maxsize=16)
def _redactor(secrets: frozenset[str]) -> Redactor:
    return Redactor(secrets)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced by ``***`` (longest first)."""
    if not secrets:
        return text
    return _redactor(secrets if isinstance(secrets, frozenset) else frozenset(secrets))(text)


def clean(text: str, secrets: Iterable[str]) -> str:
    """``text`` with secrets masked and line breaks escaped, fit for one output line."""
    masked = redact(text, secrets)
    return "".join(ch if ch.isprintable() or ch == " " else repr(ch)[1:-1] for ch in masked)
