"""What the template tests share: the limits' messages and a context to render in."""

from __future__ import annotations

from typing import Any

import pytest

from roost.errors import TemplateRenderError
from roost.templating import TemplateLimitError, render_template

TOO_LONG = "the template ran too long (more than 1,000,000 steps)"
TOO_BIG = "the template would build a value larger than 1 MiB"
TOO_MUCH_OUTPUT = "the template's output would exceed 1 MiB"
TOO_LONG_NUMBER = "the template would build a number of more than 4,300 digits"

CONTEXT: dict[str, Any] = {
    "vars": {
        "persona": "careful",
        "goods": [{"name": "tea", "price": 3}, {"name": "cake", "price": 5}],
        "tree": [{"n": 1, "children": [{"n": 2, "children": []}]}, {"n": 3, "children": []}],
        "scores": {"b": 2, "a": 1},
    },
    "name": "critic",
    "members": ["writer", "critic", "editor"],
    "now": "2024-05-01T10:00:00Z",
}


def limit_error(source: str) -> str:
    with pytest.raises(TemplateLimitError) as caught:
        render_template(source, **CONTEXT)
    assert isinstance(caught.value, TemplateRenderError)
    message = str(caught.value)
    assert "\n" not in message
    return message
