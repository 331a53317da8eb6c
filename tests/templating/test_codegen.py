"""The compiled template counts what Jinja2 runs in plain Python: loops, comparisons, slices."""

from __future__ import annotations

import pytest

from roost.templating import TemplateLimitError, render_template
from tests.templating.conftest import TOO_LONG


@pytest.mark.parametrize(
    "source",
    [
        # empty loop bodies: the iterations alone are the work
        "{% set r = range(100000)|list %}{% for k in [1] * 20 %}{% for i in r %}{% endfor %}"
        "{% endfor %}",
        # comparing and slicing a long list, over and over
        "{% set big = range(100000)|list %}{% for i in range(200) %}"
        "{% if big == big %}{% endif %}{% endfor %}",
        "{% set big = range(100000)|list %}{% for i in range(200) %}"
        "{% set x = big[1:] %}{% endfor %}",
    ],
)
def test_work_the_compiled_code_does_itself_is_counted(source: str) -> None:
    with pytest.raises(TemplateLimitError) as caught:
        render_template(source)
    assert str(caught.value) == TOO_LONG


def test_counted_work_still_renders_what_jinja2_renders() -> None:
    source = (
        "{% for i in range(3) %}{{ i }}{% if [i] < [2] %}<{% endif %}{% endfor %}{{ {'a': 1} }}"
    )
    assert render_template(source) == "0<1<2{'a': 1}"
