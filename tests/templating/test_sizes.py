"""What a value weighs: a character a byte, a list item eight, up to 1 MiB."""

from __future__ import annotations

from roost.templating import render_template
from tests.templating.conftest import TOO_BIG, TOO_MUCH_OUTPUT, limit_error


def test_a_value_or_an_output_of_exactly_1_mib_is_allowed() -> None:
    assert len(render_template("{{ 'x' * 1048576 }}")) == 1048576
    assert len(render_template("{{ ([1] * 131072)|length }}")) == 6
    assert limit_error("{{ 'x' * 1048577 }}") == TOO_BIG
    assert limit_error("{{ 'x' * 1048576 }}.") == TOO_MUCH_OUTPUT
