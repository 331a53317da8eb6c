"""Whether a reply says ``TERMINATE`` or ``INTERRUPT``, under a flow's ``markers`` rule.

Models rarely answer with the bare word: they write ``Checked: 4 is right.
TERMINATE``. The rule a flow chooses (``defaults.markers``, or an agent's own
``markers``) decides which replies count:

- ``end`` (the default): the reply, trimmed, ends with the word, and the word
  is whole (``...right. TERMINATE`` counts, ``TERMINATED`` does not);
- ``whole``: the trimmed reply is exactly the word;
- ``anywhere``: the word appears as a whole word anywhere in the reply.

Case matters everywhere. The reply itself is recorded as written.
"""

from __future__ import annotations

import re
from typing import Literal

MarkerRule = Literal["end", "whole", "anywhere"]
Marker = Literal["TERMINATE", "INTERRUPT"]

TERMINATE: Marker = "TERMINATE"
INTERRUPT: Marker = "INTERRUPT"
# TERMINATE first: a reply that says both ends the run (the order of the checks after a reply).
_MARKERS: tuple[Marker, ...] = (TERMINATE, INTERRUPT)
# A word character is what a regular expression's \w matches, so that both rules agree.
_WORD_CHAR = re.compile(r"\w")
_WHOLE_WORD = {word: re.compile(rf"(?<!\w){word}(?!\w)") for word in _MARKERS}


def marker_in(reply: str, rule: MarkerRule = "end") -> Marker | None:
    """The marker ``reply`` says under ``rule`` (``TERMINATE`` before ``INTERRUPT``), else None."""
    if rule == "anywhere":
        return next((w for w in _MARKERS if _WHOLE_WORD[w].search(reply)), None)
    text = reply.strip()
    if rule == "whole":
        return next((w for w in _MARKERS if text == w), None)
    for word in _MARKERS:
        if text.endswith(word):
            before = len(text) - len(word) - 1
            if before < 0 or not _WORD_CHAR.match(text[before]):
                return word
    return None
