"""Choosing which tools to offer when an agent has more than its ``tool_limit``.

Each tool is a small document: its name (split at ``_``, ``-``, ``#``, ``.``
and camelCase humps) followed by its description. Documents are scored against
the latest user message with Okapi BM25 (k1 = 1.5, b = 0.75): a word scores
more when it is rare among the agent's tools and frequent in that tool's text,
and long descriptions are damped so that they do not win by length alone.
Ties keep the agent's own order, so with no matching words the first
``tool_limit`` tools are offered.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import TYPE_CHECKING

from roost.ports import words

if TYPE_CHECKING:
    from collections.abc import Sequence

# Where a tool name's words meet: a lower-case letter or digit before a capital, or "_".
_JOINS = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|_")
K1 = 1.5
B = 0.75


def tokens(text: str) -> list[str]:
    """Lower-case words of ``text``; ``getWeather`` and ``get_weather`` both give get, weather."""
    return words(_JOINS.sub(" ", text))


def bm25_scores(query: str, documents: Sequence[str]) -> list[float]:
    """The BM25 score of each document for ``query`` (0.0 for a document sharing no word)."""
    docs = [Counter(tokens(doc)) for doc in documents]
    if not docs:
        return []
    lengths = [sum(doc.values()) for doc in docs]
    average = (sum(lengths) / len(docs)) or 1.0
    frequency = Counter(word for doc in docs for word in doc)
    scores = []
    for doc, length in zip(docs, lengths, strict=True):
        score = 0.0
        for word in set(tokens(query)):
            count = doc.get(word, 0)
            if not count:
                continue
            idf = math.log(1 + (len(docs) - frequency[word] + 0.5) / (frequency[word] + 0.5))
            score += idf * count * (K1 + 1) / (count + K1 * (1 - B + B * length / average))
        scores.append(score)
    return scores


def best_matches(query: str, documents: Sequence[str], limit: int) -> list[int]:
    """Indices of the ``limit`` best-scoring documents, in their original order."""
    scores = bm25_scores(query, documents)
    ranked = sorted(range(len(documents)), key=lambda i: (-scores[i], i))
    return sorted(ranked[:limit])
