"""Jinja2's filters, bounded: each does what Jinja2's does, in bounded work."""

from __future__ import annotations

import pytest

from roost.errors import TemplateRenderError
from roost.templating import render_template


def test_lists_are_summed_in_one_pass_not_by_repeated_addition() -> None:
    assert render_template("{{ range(100000)|batch(1)|sum(start=[])|length }}") == "100000"
    assert render_template("{{ [(1,), (2, 3)]|sum(start=(0,)) }}") == "(0, 1, 2, 3)"
    with pytest.raises(TemplateRenderError, match="can only concatenate list"):
        render_template("{{ [[1], (2,)]|sum(start=[]) }}")
