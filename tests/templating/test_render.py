"""The sandboxed template environment used for roles and director prompts."""

from __future__ import annotations

import pytest

from roost.errors import TemplateRenderError
from roost.templating import TemplateSyntaxProblem, parse_template, render_template


def test_renders_with_context() -> None:
    text = render_template("You are {{ vars.persona }}.", vars={"persona": "careful"})
    assert text == "You are careful."


def test_parse_is_cached_and_reusable() -> None:
    assert parse_template("{{ a }}") is parse_template("{{ a }}")


def test_syntax_error_carries_the_template_line() -> None:
    with pytest.raises(TemplateSyntaxProblem) as caught:
        parse_template("line one\n{% if x %}\nno end")
    assert caught.value.lineno == 2  # the block left open
    assert "endif" in caught.value.message
    assert isinstance(caught.value, TemplateRenderError)


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("{{ missing }}", "undefined"),
        ("{{ vars.nope }}", "undefined"),
        ("{{ ''.__class__.__mro__ }}", "sandbox"),
        ("{{ vars.lst.append(1) }}", "sandbox"),
        ("{{ 1 / 0 }}", "ZeroDivisionError"),
        ("{% for i in range(10**9) %}{% endfor %}", "OverflowError"),
    ],
)
def test_render_failures_are_template_render_errors(source: str, words: str) -> None:
    with pytest.raises(TemplateRenderError) as caught:
        render_template(source, vars={"lst": [1, 2]})
    assert words in str(caught.value)
