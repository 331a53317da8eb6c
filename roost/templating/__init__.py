"""Rendering templates in Jinja2's sandbox, bounded in steps, sizes, output and time.

Jinja2's sandbox stops a template from reaching Python internals, but not from
asking for ``'x' * 10**10`` or looping ten billion times. This package adds the
missing bounds, so that a hostile or mistaken template fails at once with one
readable ``TemplateLimitError`` instead of hanging or eating all memory:

- **Steps.** A render may take ``MAX_STEPS`` steps. A loop iteration, a filter,
  a test, a comparison or an arithmetic operator costs one step, a call (of a
  function, a method, a macro) ``CALL_STEPS``, and each costs one more step for
  every 8 bytes of the values it works on or builds (a character counts a byte,
  a list item 8), or for every byte, for the filters that work a word or a
  character at a time in Python.
- **Sizes.** No string, list or printed value a template builds may be larger
  than ``MAX_SIZE`` bytes, measured as above, and no number longer than
  ``MAX_DIGITS`` digits. Every operation that can build something much larger
  than its inputs (``*``, ``**``, ``%``, ``~``, padding and joining filters and
  methods, ``lipsum``, ...) checks the size it would build *before* building it.
- **Output.** The rendered text may not exceed ``MAX_OUTPUT`` characters.
- **Native work.** Work that Python does in one call but whose cost grows
  faster than its input is charged for what it costs, not for its size:
  converting long numbers to and from text (quadratic in their digits),
  building a hash table (``unique``, a dict) from keys whose hashes collide,
  and the Python-level loops of filters that take an attribute or a key.
  ``encode`` and ``decode`` are not available to templates at all: codecs
  such as ``idna`` and ``punycode`` take seconds on a few thousand characters.
- **Time.** A render that still runs ``DEADLINE`` seconds stops at its next
  counted step, the last line of defence should some work escape the counting.

Steps are counted rather than timed, so a template is refused or accepted the
same way on every machine and on every replay; the deadline is far beyond
what a million counted steps take. A template without loops pays only for the
filters and operators it uses.

Where each part lives:

- ``sizes``: what a value weighs, in the bytes the bounds count;
- ``budget``: the steps and the deadline of one render, and the size guards;
- ``operators``: ``*``, ``**``, ``+`` and ``%`` checked before they run;
- ``methods``: str, bytes, int and dict methods and ``str.format`` checked;
- ``filters``: Jinja2's filters, tests and globals, bounded and charging steps;
- ``codegen``: the code generator that counts loops and comparisons in the
  compiled template;
- ``environment``: ``BoundedSandbox``, which puts them together;
- ``render``: the one environment every template of a flow is parsed and
  rendered in, and ``render_template``, which turns any failure into one
  ``TemplateRenderError``.

The code generator and the sandbox override and call parts of Jinja2 that are
not its public API; pyproject.toml pins Jinja2 to the minor version they were
written against, and ``tests/templating/test_jinja_internals.py`` fails,
naming what moved, when an installed Jinja2 differs in any of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from roost.templating.budget import (
        CALL_STEPS,
        DEADLINE,
        MAX_DIGITS,
        MAX_OUTPUT,
        MAX_STEPS,
        TemplateLimitError,
        budgeted,
    )
    from roost.templating.environment import BoundedSandbox, BoundedTemplate
    from roost.templating.render import (
        TemplateSyntaxProblem,
        parse_template,
        render_template,
        template_env,
    )
    from roost.templating.sizes import MAX_SIZE

# Each name's module, imported on first use: Jinja2 is loaded only when a text that holds
# template syntax is parsed or rendered, not by every flow that is loaded or run.
_HOME = {
    **dict.fromkeys(("CALL_STEPS", "DEADLINE", "MAX_DIGITS", "MAX_OUTPUT", "MAX_STEPS"), "budget"),
    "TemplateLimitError": "budget",
    "budgeted": "budget",
    "BoundedSandbox": "environment",
    "BoundedTemplate": "environment",
    "TemplateSyntaxProblem": "render",
    "parse_template": "render",
    "render_template": "render",
    "template_env": "render",
    "MAX_SIZE": "sizes",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # the next look-up finds it without this function
    return value


__all__ = [
    "CALL_STEPS",
    "DEADLINE",
    "MAX_DIGITS",
    "MAX_OUTPUT",
    "MAX_SIZE",
    "MAX_STEPS",
    "BoundedSandbox",
    "BoundedTemplate",
    "TemplateLimitError",
    "TemplateSyntaxProblem",
    "budgeted",
    "parse_template",
    "render_template",
    "template_env",
]
