"""Jinja2's filters, tests and globals, each charging steps and refusing values too large."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from itertools import chain
from typing import TYPE_CHECKING, Any

import jinja2
from jinja2 import filters as jinja_filters
from jinja2 import nodes
from jinja2.utils import Namespace, generate_lorem_ipsum

from roost.templating.budget import (
    CURRENT_BUDGET,
    ITEM_STEPS,
    MAX_DIGITS,
    TOO_LONG_NUMBER,
    Counted,
    TemplateLimitError,
    check_size,
    keys_of,
    pay_to_build,
    spend,
    spend_on,
    spend_on_hashing,
)
from roost.templating.methods import replaced_size
from roost.templating.operators import check_percent
from roost.templating.sizes import ITEM, digits_size, shallow_size, size_of

if TYPE_CHECKING:
    from markupsafe import Markup

# Filters that turn their value into text: printing a nested list can be huge.
_TEXT_FILTERS = frozenset(
    {
        *("capitalize", "center", "e", "escape", "forceescape", "format", "indent", "lower"),
        *("pprint", "replace", "safe", "string", "striptags", "title", "tojson", "trim"),
        *("truncate", "upper", "urlencode", "urlize", "wordcount", "wordwrap", "xmlattr"),
    }
)
# Filters that work a word or a character at a time in Python: steps per character
# of their value (measured: wordwrap with a narrow width spends a microsecond or two
# on each piece of a word it breaks).
_SLOW_FILTERS = {
    **dict.fromkeys(("indent", "title", "urlencode", "urlize", "pprint"), 1),
    **dict.fromkeys(("striptags", "wordcount"), 1),
    "wordwrap": 4,
}
# Filters that do Python work for every item of their value (a key, an attribute, a
# test or a filter called on it): ``ITEM_STEPS`` for each item, before they run.
_ITEM_FILTERS = frozenset(
    {
        *("dictsort", "groupby", "map", "max", "min", "reject", "rejectattr", "select"),
        *("selectattr", "sort", "sum", "unique", "join", "items", "batch", "slice"),
    }
)


def _charging(
    function: Callable[..., Any], *, text: bool = False, slow: int = 0, items: bool = False
) -> Callable[..., Any]:
    """``function`` (a filter or test), charging steps for its arguments before it runs.

    A lazy result (``map``, ``select``, ...) is charged again item by item as it is
    read, since the work of each item happens then.
    """
    skip = 1 if hasattr(function, "jinja_pass_arg") else 0  # context, eval_ctx or environment

    @functools.wraps(function)
    def charged(*args: Any, **kwargs: Any) -> Any:
        values = args[skip:]
        if text and values and not isinstance(values[0], str):
            check_size(size_of(values[0]))
        budget = CURRENT_BUDGET.get()
        if budget is None:
            return function(*args, **kwargs)
        if slow and values:  # steps a character, not a step for eight
            budget.spend(slow * size_of(values[0], budget.left))
        # A counted iterable's items are charged as they are read, not here.
        if items and values and isinstance(values[0], Sized) and type(values[0]) is not Counted:
            budget.spend(ITEM_STEPS * len(values[0]))
        budget.spend_on(*values, *kwargs.values())
        result = function(*args, **kwargs)
        if isinstance(result, Iterator):
            return Counted(result, budget, ITEM_STEPS)
        return result

    return charged


def _center(value: Any, width: int = 80) -> str:
    if isinstance(width, int):
        pay_to_build(max(size_of(value), width))
    return jinja_filters.do_center(value, width)


def _indent(s: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    indention = len(width) if isinstance(width, str) else width
    if isinstance(indention, int):
        text = str(s)
        pay_to_build(len(text) + (text.count("\n") + 2) * indention)
    return jinja_filters.do_indent(s, width, first, blank)


@jinja2.pass_environment
def _wordwrap(
    environment: jinja2.Environment,
    s: Any,
    width: int = 79,
    break_long_words: bool = True,
    wrapstring: str | None = None,
    break_on_hyphens: bool = True,
) -> str:
    text = str(s)
    separator = environment.newline_sequence if wrapstring is None else str(wrapstring)
    if isinstance(width, int) and width > 0:
        breaks = len(text) // width + text.count(" ") + text.count("\n") + text.count("-") + 1
        pay_to_build(len(text) + breaks * len(separator))
    return jinja_filters.do_wordwrap(
        environment, s, width, break_long_words, wrapstring, break_on_hyphens
    )


@jinja2.pass_eval_context
def _replace(
    eval_ctx: nodes.EvalContext, s: Any, old: Any, new: Any, count: int | None = None
) -> str:
    pay_to_build(replaced_size(str(s), str(old), str(new), count))
    return jinja_filters.do_replace(eval_ctx, s, old, new, count)


@jinja2.pass_eval_context
def _join(
    eval_ctx: nodes.EvalContext,
    value: Iterable[Any],
    d: str = "",
    attribute: str | int | None = None,
) -> str:
    items = list(value)
    if attribute is not None:
        items = list(map(jinja_filters.make_attrgetter(eval_ctx.environment, attribute), items))
    pay_to_build(sum(size_of(item) for item in items) + len(str(d)) * max(len(items) - 1, 0))
    return jinja_filters.sync_do_join(eval_ctx, items, d)


def _format(value: Any, *args: Any, **kwargs: Any) -> str:
    check_percent(str(value), kwargs or args)
    return jinja_filters.do_format(value, *args, **kwargs)


def _batch(value: Iterable[Any], linecount: int, fill_with: Any = None) -> Iterator[list[Any]]:
    if fill_with is not None and isinstance(linecount, int):
        pay_to_build(ITEM * linecount)
    return jinja_filters.do_batch(value, linecount, fill_with)


def _slice(value: Iterable[Any], slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
    if isinstance(slices, int):
        pay_to_build(ITEM * slices)
    return jinja_filters.sync_do_slice(list(value), slices, fill_with)


@jinja2.pass_environment
def _sum(
    environment: jinja2.Environment,
    iterable: Iterable[Any],
    attribute: str | int | None = None,
    start: Any = 0,
) -> Any:
    """``sum``, adding lists and tuples in one pass rather than by repeated ``+``."""
    if not isinstance(start, (list, tuple)):
        return jinja_filters.sync_do_sum(environment, iterable, attribute, start)
    if attribute is not None:
        iterable = map(jinja_filters.make_attrgetter(environment, attribute), iterable)
    items = list(iterable)
    kind = type(start)
    for item in items:
        if type(item) is not kind:
            name = kind.__name__
            raise TypeError(f'can only concatenate {name} (not "{type(item).__name__}") to {name}')
    pay_to_build(shallow_size(start) + sum(shallow_size(item) for item in items))
    total: Any = start
    return total + kind(chain.from_iterable(items))


@jinja2.pass_eval_context
def _tojson(eval_ctx: nodes.EvalContext, value: Any, indent: int | str | None = None) -> Markup:
    width = len(indent) if isinstance(indent, str) else indent if isinstance(indent, int) else 0
    pay_to_build(size_of(value) * (1 + max(width, 0)))
    return jinja_filters.do_tojson(eval_ctx, value, indent)  # type: ignore[arg-type]


@jinja2.pass_environment
def _unique(
    environment: jinja2.Environment,
    value: Iterable[Any],
    case_sensitive: bool = False,
    attribute: str | int | None = None,
) -> Iterator[Any]:
    """``unique``, paying first for the hash table it builds (see ``spend_on_hashing``)."""
    items = list(value)
    postprocess = None if case_sensitive else jinja_filters.ignore_case
    key = jinja_filters.make_attrgetter(environment, attribute, postprocess=postprocess)
    spend_on_hashing(map(key, items))
    return jinja_filters.sync_do_unique(environment, items, case_sensitive, attribute)


def _int(value: Any, default: int = 0, base: int = 10) -> int:
    """``int``: reading a long number from text costs time quadratic in its digits."""
    if isinstance(value, str):
        spend(digits_size(value) // ITEM)
    return jinja_filters.do_int(value, default, base)


def _dict(*args: Any, **kwargs: Any) -> dict[Any, Any]:
    """``dict()``, paying first for the hash table it builds."""
    if args:
        source = args[0]
        pairs = list(source.items()) if isinstance(source, Mapping) else list(source)
        spend_on_hashing(keys_of(pairs))
        args = (pairs, *args[1:])
    return dict(*args, **kwargs)


def _round(value: float, precision: int = 0, method: str = "common") -> float:
    if isinstance(precision, int) and abs(precision) > MAX_DIGITS:
        raise TemplateLimitError(TOO_LONG_NUMBER)
    return jinja_filters.do_round(value, precision, method)  # type: ignore[arg-type]


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    """``lipsum``, refusing more words than would fit in 1 MiB (each word is made in Python)."""
    if isinstance(n, int) and isinstance(max, int):
        words = n * max
        pay_to_build(words * 12)
        spend(words)
    return generate_lorem_ipsum(n, html, min, max)


_BOUNDED_FILTERS: dict[str, Callable[..., Any]] = {
    "batch": _batch,
    "center": _center,
    "format": _format,
    "indent": _indent,
    "int": _int,
    "join": _join,
    "replace": _replace,
    "round": _round,
    "slice": _slice,
    "sum": _sum,
    "tojson": _tojson,
    "unique": _unique,
    "wordwrap": _wordwrap,
}


class _Namespace(Namespace):
    """``namespace()``: storing a value costs its size, so doubling one each time is bounded."""

    def __setitem__(self, name: str, value: Any) -> None:
        spend_on(value)
        super().__setitem__(name, value)


# Globals a template may call that build a value: each pays for what it builds.
BOUNDED_GLOBALS: dict[str, Callable[..., Any]] = {
    "lipsum": _lipsum,
    "namespace": _Namespace,
    "dict": _dict,
}


def bounded_filters(filters: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """Every filter of ``filters``, each replaced by its bounded version and charging steps."""
    merged = {**filters, **_BOUNDED_FILTERS}
    return {
        name: _charging(
            function,
            text=name in _TEXT_FILTERS,
            slow=_SLOW_FILTERS.get(name, 0),
            items=name in _ITEM_FILTERS,
        )
        for name, function in merged.items()
    }


def bounded_tests(tests: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """Every test of ``tests``, charging steps for its arguments."""
    return {name: _charging(test) for name, test in tests.items()}
