"""Text methods are refused before they build more than 1 MiB, measured without building."""

from __future__ import annotations

import pytest

from roost.templating import TemplateLimitError
from roost.templating.methods import check_method_call, replaced_size


@pytest.mark.parametrize(
    ("text", "old", "new", "count"),
    [
        ("banana", "a", "xyz", -1),
        ("banana", "a", "", 2),
        ("banana", "", "-", -1),
        ("banana", "na", "NA", 1),
        ("banana", "q", "long", -1),
    ],
)
def test_the_size_of_a_replacement_is_known_before_replacing(
    text: str, old: str, new: str, count: int
) -> None:
    assert replaced_size(text, old, new, count) == len(text.replace(old, new, count))


def test_a_method_call_that_would_build_too_much_is_refused_and_a_small_one_passes() -> None:
    assert check_method_call("x".center, (5,), {}) == (5,)
    with pytest.raises(TemplateLimitError, match="larger than 1 MiB"):
        check_method_call("x".center, (10**10,), {})
    with pytest.raises(TemplateLimitError, match="larger than 1 MiB"):
        check_method_call("x".zfill, (), {"width": 10**10})
    big = "x" * 100_000
    with pytest.raises(TemplateLimitError, match="larger than 1 MiB"):
        check_method_call(big.replace, ("x", big), {})
    # join is given its items as a list it could measure, even from a one-pass iterable
    assert check_method_call(", ".join, (iter(["a", "b"]),), {}) == (["a", "b"],)
