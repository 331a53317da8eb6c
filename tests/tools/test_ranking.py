"""BM25 ranking of tools against a message, including properties over generated inputs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from roost.tools.ranking import best_matches, bm25_scores, tokens

words = st.sampled_from(["add", "sum", "weather", "city", "file", "read", "write", "time"])
documents = st.lists(st.lists(words, max_size=6).map(" ".join), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(documents, st.lists(words, max_size=5).map(" ".join), st.integers(1, 15))
def test_best_matches_is_a_sorted_selection_of_the_right_size(
    docs: list[str], query: str, limit: int
) -> None:
    chosen = best_matches(query, docs, limit)
    assert chosen == sorted(set(chosen))
    assert len(chosen) == min(limit, len(docs))
    assert all(0 <= i < len(docs) for i in chosen)


@settings(max_examples=60, deadline=None)
@given(documents)
def test_a_unique_matching_tool_is_always_offered(docs: list[str]) -> None:
    docs = [*docs, "zebra crossing"]
    assert len(docs) - 1 in best_matches("where is the zebra", docs, 1)


def test_tokens() -> None:
    assert tokens("getWeather for math#add_two") == ["get", "weather", "for", "math", "add", "two"]


def test_bm25_prefers_rare_matching_words() -> None:
    docs = ["weather forecast for a city", "add two numbers", "weather weather alerts"]
    scores = bm25_scores("what is the forecast in Oslo", docs)
    assert scores[0] > 0 and scores[1] == 0
    assert best_matches("add numbers", docs, 1) == [1]
    assert best_matches("nothing matches", docs, 2) == [0, 1]  # ties keep the declared order
