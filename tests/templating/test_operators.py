"""Operators are checked before they run: ``%`` reads the widths its format asks for."""

from __future__ import annotations

from roost.templating.operators import printf_numbers
from tests.templating.conftest import TOO_BIG, limit_error


def test_a_percent_key_with_parentheses_does_not_hide_its_width() -> None:
    assert list(printf_numbers("%(a(b)c)99999999s")) == ["99999999"]
    assert list(printf_numbers("%5.2f %% %(x)-7s %*d")) == ["5", "2", "7", "*"]
    assert list(printf_numbers("%(never closed")) == []
    assert limit_error("{{ '%(a(b)c)99999999s' % {'a(b)c': 'x'} }}") == TOO_BIG
