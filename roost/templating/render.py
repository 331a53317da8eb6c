"""The one sandboxed Jinja2 environment for roles, director prompts and start messages.

Templates come from flow files, which may come from anyone, so they run in
Jinja2's ``ImmutableSandboxedEnvironment`` (no attribute tricks, no mutation
of passed-in values) with ``StrictUndefined`` (a misspelt variable is an error,
not an empty string), bounded in steps, sizes and output (``BoundedSandbox``:
a template asking for too much fails with ``TemplateLimitError``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import jinja2

from roost.errors import TemplateRenderError
from roost.templating.budget import TemplateLimitError, budgeted
from roost.templating.environment import BoundedSandbox

_ENV = BoundedSandbox(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
)


def template_env() -> BoundedSandbox:
    """The environment every template of a flow is parsed and rendered in."""
    return _ENV


class TemplateSyntaxProblem(TemplateRenderError):
    """A template that does not parse; ``lineno`` is its line within the template (1-based)."""

    def __init__(self, message: str, lineno: int) -> None:
        self.message = message
        self.lineno = lineno
        super().__init__(f"template line {lineno}: {message}")


@lru_cache(maxsize=512)
def parse_template(source: str) -> jinja2.Template:
    """The compiled template of ``source``; ``TemplateSyntaxProblem`` if it does not parse."""
    try:
        with budgeted():  # constant parts are folded when compiling, under the same bounds
            return _ENV.from_string(source)
    except jinja2.TemplateSyntaxError as error:
        message = " ".join(str(error.message or "syntax error").split())
        raise TemplateSyntaxProblem(message, error.lineno or 1) from None
    except (RecursionError, MemoryError, ValueError) as error:
        raise TemplateSyntaxProblem(f"template too complex ({type(error).__name__})", 1) from None


def render_template(source: str, **context: Any) -> str:
    """``source`` rendered with ``context``; any failure becomes ``TemplateRenderError``."""
    template = parse_template(source)
    try:
        return template.render(**context)
    except TemplateLimitError:
        raise
    except jinja2.exceptions.SecurityError as error:
        raise TemplateRenderError(f"template refused by the sandbox: {error}") from None
    except jinja2.UndefinedError as error:
        raise TemplateRenderError(f"template uses an undefined value: {error.message}") from None
    except Exception as error:  # a template may raise anything (1/0, bad filters); translate it
        raise TemplateRenderError(f"template failed: {type(error).__name__}: {error}") from None
