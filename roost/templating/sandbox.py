"""Bounds on what rendering a template may cost: steps, sizes of values, and output.

Jinja2's sandbox stops a template from reaching Python internals, but not from
asking for ``'x' * 10**10`` or looping ten billion times. This module adds the
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
what a million counted steps take. The counting is woven into the
compiled template (``_CodeGenerator``) and into the filters, tests, globals and
sandbox hooks of ``BoundedSandbox``; a template without loops pays only for the
filters and operators it uses.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sized
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import chain
from types import BuiltinMethodType, MethodType
from typing import Any, cast

import jinja2
from jinja2 import filters as jinja_filters
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.runtime import Context, LoopContext
from jinja2.sandbox import (
    ImmutableSandboxedEnvironment,
    SandboxedEscapeFormatter,
    SandboxedFormatter,
)
from jinja2.utils import Namespace, generate_lorem_ipsum
from jinja2.visitor import NodeTransformer
from markupsafe import Markup

from roost.errors import TemplateRenderError

MAX_STEPS = 1_000_000
CALL_STEPS = 10  # a call (a macro's above all) costs Jinja2 ten times a loop iteration or more
MAX_SIZE = 1 << 20  # bytes: a character is one, a list item eight
MAX_OUTPUT = 1 << 20  # characters of rendered text
MAX_DIGITS = 4300  # Python's own limit for printing an int
DEADLINE = 10.0  # seconds: the wall-clock bound of one render, behind the counted steps
_ITEM = 8  # bytes a list item or a dict entry's half counts for
_MAX_BITS = int(MAX_DIGITS * math.log2(10))
_CLOCK_STEPS = 256  # a loop looks at the clock each time it has spent this many steps
# Steps for each item that a filter handles in Python (an attribute looked up, a key
# computed, an item passed along a lazy filter), on top of the item's size.
_ITEM_STEPS = 2

TOO_LONG = f"the template ran too long (more than {MAX_STEPS:,} steps)"
TOO_SLOW = f"the template ran too long (more than {DEADLINE:g} seconds)"
TOO_BIG = "the template would build a value larger than 1 MiB"
TOO_MUCH_OUTPUT = "the template's output would exceed 1 MiB"
TOO_LONG_NUMBER = f"the template would build a number of more than {MAX_DIGITS:,} digits"


class TemplateLimitError(TemplateRenderError):
    """A template asked for more steps, a larger value or more output than a render allows."""


class _Budget:
    """The steps left to one render, and the time by which it must be done."""

    __slots__ = ("clock_at", "deadline", "left")

    def __init__(self) -> None:
        self.left = MAX_STEPS
        self.deadline = time.monotonic() + DEADLINE
        self.clock_at = MAX_STEPS - _CLOCK_STEPS  # loops look at the clock below this

    def spend(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            raise TemplateLimitError(TOO_LONG)
        self.check_clock()  # a filter, call or operator: the clock costs little beside it

    def check_clock(self) -> None:
        self.clock_at = self.left - _CLOCK_STEPS
        if time.monotonic() > self.deadline:
            raise TemplateLimitError(TOO_SLOW)

    def spend_on(self, *values: Any) -> None:
        """One step, and one for every 8 bytes of ``values``."""
        steps = 1
        for value in values:
            if type(value) is str:
                steps += len(value) // _ITEM
            else:
                steps += _size(value, self.left * _ITEM) // _ITEM
        self.spend(steps)


_BUDGET: ContextVar[_Budget | None] = ContextVar("roost_template_budget", default=None)


def _spend_on(*values: Any) -> None:
    budget = _BUDGET.get()
    if budget is not None:
        budget.spend_on(*values)


def _spend(steps: int) -> None:
    budget = _BUDGET.get()
    if budget is not None:
        budget.spend(steps)


@contextmanager
def budgeted() -> Iterator[_Budget]:
    """Gives the code inside ``with budgeted():`` a fresh budget of steps."""
    budget = _Budget()
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


# ---------------------------------------------------------------- sizes

_TEXT = (str, bytes)
_SEQUENCE = (str, bytes, list, tuple)
_SCALARS = frozenset({bool, float, type(None)})  # ints are measured: they can be long
_COLLECTIONS: tuple[type[Collection[Any]], ...] = (
    *(list, tuple, set, frozenset),
    *(type({}.keys()), type({}.values()), type({}.items())),
)


def _int_size(value: int) -> int:
    """An int's bytes, plus the square of its 64-bit words.

    Turning a number into text or back costs Python time quadratic in its
    digits (4,000 digits take milliseconds), so a long number weighs that much
    wherever it is printed, compared or computed with; a number of one word
    weighs its 8 bytes and one more.
    """
    bits = value.bit_length()
    return bits // 8 + (bits // 64) ** 2


def _digits_size(text: str) -> int:
    """What reading ``text`` as an int costs, as ``_int_size`` of the number it gives."""
    bits = len(text) * 10 // 3  # a decimal digit is about 3.3 bits
    return bits // 8 + (bits // 64) ** 2


def _size(value: Any, limit: int = MAX_SIZE) -> int:
    """About how many bytes ``value`` holds and prints as; walking stops once past ``limit``.

    Text counts a byte a character, a list, tuple or set ``_ITEM`` an item, a dict
    twice that an entry, an int as ``_int_size`` says; everything else (a macro, a
    loop) counts 0 beyond the slot it takes. Shared values count each time they are
    reached, as printing them would, so a list that nests itself twice over twenty
    times weighs a million and the walk stops there.
    """
    kind = type(value)
    if kind is str:
        return len(value)
    if kind is int:
        return _int_size(value)
    if kind in _SCALARS:
        return 0
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _TEXT):
            total += len(item)
        elif isinstance(item, _COLLECTIONS):
            total += _ITEM * len(item)
            if total <= limit:
                stack.extend(item)
        elif isinstance(item, dict):
            total += 2 * _ITEM * len(item)
            if total <= limit:
                stack.extend(item.keys())
                stack.extend(item.values())
        elif isinstance(item, int):
            total += _int_size(item)
        elif isinstance(item, range):
            total += _ITEM * len(item)
        elif isinstance(item, Namespace):
            attrs: dict[str, Any] = object.__getattribute__(item, "_Namespace__attrs")
            stack.append(attrs)
        if total > limit:
            break
    return total


def _shallow(value: Any) -> int:
    """The bytes of ``value`` itself, not of what its items refer to."""
    kind = type(value)
    if kind is str:
        return len(value)
    if kind is int:
        return _int_size(value)
    if kind in _SCALARS:
        return 0
    if isinstance(value, _TEXT):
        return len(value)
    if isinstance(value, (list, tuple)):
        return _ITEM * len(value)
    if isinstance(value, int):
        return _int_size(value)
    return _ITEM


def _check_size(size: int) -> None:
    if size > MAX_SIZE:
        raise TemplateLimitError(TOO_BIG)


def _build(size: int) -> None:
    """Before building ``size`` bytes: refused past 1 MiB, and a step for every 8."""
    if size > MAX_SIZE:
        raise TemplateLimitError(TOO_BIG)
    _spend(size // _ITEM)


def _check_bits(bits: float) -> None:
    if bits > _MAX_BITS:
        raise TemplateLimitError(TOO_LONG_NUMBER)


def _number(text: str) -> int:
    """A width or precision written in a format; a huge one is simply too big."""
    return int(text) if len(text) <= 9 else MAX_SIZE + 1


def _spend_on_hashing(keys: Iterable[Any]) -> list[Any]:
    """``keys`` as a list, after spending a step for each probe a hash table of them takes.

    Keys with equal hashes (ints that differ by a multiple of 2**61 - 1, say) make
    every insertion probe all the earlier ones: n such keys cost n * n / 2 steps,
    where keys that hash apart cost nothing beyond their size.
    """
    items = list(keys)
    seen: dict[int, int] = {}
    probes = 0
    for key in items:
        try:
            code = hash(key)
        except TypeError:
            continue  # Python refuses it when the table is built
        earlier = seen.get(code, 0)
        probes += earlier
        seen[code] = earlier + 1
    _spend(probes)
    return items


def _keys_of(pairs: Iterable[Any]) -> Iterator[Any]:
    """The first item of every two-item pair (what a dict is built from)."""
    for pair in pairs:
        if isinstance(pair, (tuple, list)) and len(pair) == 2:
            yield pair[0]


# ---------------------------------------------------------------- operators

_PAREN = re.compile(r"[()]")
# A %-field up to its conversion character, or the "%(" that opens a mapping key.
_PRINTF_FIELD = re.compile(r"%(?:\(|[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?.)", re.S)
_PRINTF_SPEC = re.compile(r"[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?.", re.S)
_SPEC_NUMBER = re.compile(r"\d+")


def _printf_numbers(template: str) -> Iterator[str]:
    """The widths and precisions written in ``template``'s %-fields, as Python reads them.

    Linear in the template: a mapping key ``%(...)`` runs to its matching
    parenthesis (a key may hold parentheses), and no part is read twice.
    """
    field = _PRINTF_FIELD.search(template)
    while field is not None:
        spec = field
        if field.group() == "%(":
            after_key = _PRINTF_SPEC.match(template, _key_end(template, field.end()))
            if after_key is None:
                return  # an unclosed key or a missing conversion: Python refuses the format
            spec = after_key
        yield from (number for number in spec.groups() if number)
        field = _PRINTF_FIELD.search(template, spec.end())


def _key_end(template: str, start: int) -> int:
    """Where the mapping key opened just before ``start`` ends (past its ')'), or the end."""
    depth = 1
    while depth:
        paren = _PAREN.search(template, start)
        if paren is None:
            return len(template)
        depth += 1 if paren.group() == "(" else -1
        start = paren.end()
    return start


def _check_percent(template: str, values: Any) -> None:
    """Refuses ``template % values`` if its widths, precisions and values could exceed 1 MiB.

    Reading the fields is Python work: a step for each ``%``.
    """
    _spend(template.count("%"))
    size = len(template) + _size(values)
    star = False
    for number in _printf_numbers(template):
        if number == "*":
            star = True
        else:
            size += _number(number)
    if star and isinstance(values, tuple):
        size += sum(abs(v) for v in values if isinstance(v, int))
    _build(size)


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuses ``left <operator> right`` if it would build too large a value or number."""
    if operator == "*":
        if isinstance(left, int) and isinstance(right, int):
            _check_bits(left.bit_length() + right.bit_length())
        elif isinstance(right, int) and isinstance(left, _SEQUENCE):
            _build(_shallow(left) * max(right, 0))
        elif isinstance(left, int) and isinstance(right, _SEQUENCE):
            _build(_shallow(right) * max(left, 0))
    elif operator == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            _check_bits(right * math.log2(abs(left)))
    elif operator == "+":
        if isinstance(left, _SEQUENCE) and isinstance(right, _SEQUENCE):
            _build(_shallow(left) + _shallow(right))
    elif operator == "%" and isinstance(left, str):
        _check_percent(left, right)


# ---------------------------------------------------------------- str and bytes methods


def _arg(args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str) -> Any:
    if len(args) > index:
        return args[index]
    return kwargs.get(name)


def _check_method(method: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[Any, ...]:
    """Refuses a call of a text method that would build more than 1 MiB; may return new args.

    ``join`` may be given a one-pass iterable, which is read into a list to be measured.
    """
    if not isinstance(method, (BuiltinMethodType, MethodType)):
        return args
    receiver = method.__self__
    name = method.__name__
    if isinstance(receiver, int) and name == "to_bytes":
        length = _arg(args, kwargs, 0, "length")
        if isinstance(length, int):
            _build(length)
        return args
    if name == "fromkeys" and args:  # dict.fromkeys, reached through any dict
        return (_spend_on_hashing(args[0]), *args[1:])
    if name == "maketrans" and args:  # str.maketrans, reached through any text
        table = args[0]
        _spend(_ITEM_STEPS * len(table) if isinstance(table, Sized) else 0)
        if isinstance(table, Mapping):
            _spend_on_hashing(table.keys())
    if not isinstance(receiver, _TEXT):
        return args
    if name in ("center", "ljust", "rjust", "zfill"):
        width = _arg(args, kwargs, 0, "width")
        if isinstance(width, int):
            _build(width)
    elif name == "expandtabs":
        tabsize = _arg(args, kwargs, 0, "tabsize")
        tab = "\t" if isinstance(receiver, str) else b"\t"
        if isinstance(tabsize, int):
            _build(len(receiver) + receiver.count(tab) * tabsize)  # type: ignore[arg-type]
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], _TEXT):
        _build(_replaced_size(receiver, args[0], args[1], args[2] if len(args) > 2 else -1))
    elif name == "join" and args:
        items = list(args[0])
        _build(sum(_size(item) for item in items) + len(receiver) * max(len(items) - 1, 0))
        return (items, *args[1:])
    elif name == "translate" and args and isinstance(args[0], Mapping | list | tuple):
        table = args[0].values() if isinstance(args[0], Mapping) else args[0]
        longest = max((_shallow(v) for v in table), default=1)
        _build(len(receiver) * max(longest, 1))
    return args


def _replaced_size(text: Any, old: Any, new: Any, count: Any) -> int:
    times = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        times = min(times, count)
    return int(len(text) + times * (_shallow(new) - len(old)))


# ---------------------------------------------------------------- str.format


class _SizedFormatter(SandboxedFormatter):
    """The sandbox's ``str.format``, refusing fields whose widths would build more than 1 MiB."""

    _built = 0

    def vformat(self, format_string: str, args: Any, kwargs: Any) -> str:
        self._built = len(format_string)
        # The formatter reads the string in Python, a piece between braces at a time.
        _spend(format_string.count("{") + format_string.count("}"))
        return super().vformat(format_string, args, kwargs)

    def format_field(self, value: Any, format_spec: str) -> Any:
        size = _size(value) + sum(_number(n) for n in _SPEC_NUMBER.findall(format_spec))
        self._built += size
        _check_size(self._built)
        _build(size)
        return super().format_field(value, format_spec)


class _SizedEscapeFormatter(_SizedFormatter, SandboxedEscapeFormatter):
    """The same for ``Markup.format``."""


# ---------------------------------------------------------------- filters, tests, globals

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
# test or a filter called on it): ``_ITEM_STEPS`` for each item, before they run.
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
            _check_size(_size(values[0]))
        budget = _BUDGET.get()
        if budget is None:
            return function(*args, **kwargs)
        if slow and values:  # steps a character, not a step for eight
            budget.spend(slow * _size(values[0], budget.left))
        # A counted iterable's items are charged as they are read, not here.
        if items and values and isinstance(values[0], Sized) and type(values[0]) is not _Counted:
            budget.spend(_ITEM_STEPS * len(values[0]))
        budget.spend_on(*values, *kwargs.values())
        result = function(*args, **kwargs)
        if isinstance(result, Iterator):
            return _Counted(result, budget, _ITEM_STEPS)
        return result

    return charged


def _center(value: Any, width: int = 80) -> str:
    if isinstance(width, int):
        _build(max(_size(value), width))
    return jinja_filters.do_center(value, width)


def _indent(s: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    indention = len(width) if isinstance(width, str) else width
    if isinstance(indention, int):
        text = str(s)
        _build(len(text) + (text.count("\n") + 2) * indention)
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
        _build(len(text) + breaks * len(separator))
    return jinja_filters.do_wordwrap(
        environment, s, width, break_long_words, wrapstring, break_on_hyphens
    )


@jinja2.pass_eval_context
def _replace(
    eval_ctx: nodes.EvalContext, s: Any, old: Any, new: Any, count: int | None = None
) -> str:
    _build(_replaced_size(str(s), str(old), str(new), count))
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
    _build(sum(_size(item) for item in items) + len(str(d)) * max(len(items) - 1, 0))
    return jinja_filters.sync_do_join(eval_ctx, items, d)


def _format(value: Any, *args: Any, **kwargs: Any) -> str:
    _check_percent(str(value), kwargs or args)
    return jinja_filters.do_format(value, *args, **kwargs)


def _batch(value: Iterable[Any], linecount: int, fill_with: Any = None) -> Iterator[list[Any]]:
    if fill_with is not None and isinstance(linecount, int):
        _build(_ITEM * linecount)
    return jinja_filters.do_batch(value, linecount, fill_with)


def _slice(value: Iterable[Any], slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
    if isinstance(slices, int):
        _build(_ITEM * slices)
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
    _build(_shallow(start) + sum(_shallow(item) for item in items))
    total: Any = start
    return total + kind(chain.from_iterable(items))


@jinja2.pass_eval_context
def _tojson(eval_ctx: nodes.EvalContext, value: Any, indent: int | str | None = None) -> Markup:
    width = len(indent) if isinstance(indent, str) else indent if isinstance(indent, int) else 0
    _build(_size(value) * (1 + max(width, 0)))
    return jinja_filters.do_tojson(eval_ctx, value, indent)  # type: ignore[arg-type]


@jinja2.pass_environment
def _unique(
    environment: jinja2.Environment,
    value: Iterable[Any],
    case_sensitive: bool = False,
    attribute: str | int | None = None,
) -> Iterator[Any]:
    """``unique``, paying first for the hash table it builds (see ``_spend_on_hashing``)."""
    items = list(value)
    postprocess = None if case_sensitive else jinja_filters.ignore_case
    key = jinja_filters.make_attrgetter(environment, attribute, postprocess=postprocess)
    _spend_on_hashing(map(key, items))
    return jinja_filters.sync_do_unique(environment, items, case_sensitive, attribute)


def _int(value: Any, default: int = 0, base: int = 10) -> int:
    """``int``: reading a long number from text costs time quadratic in its digits."""
    if isinstance(value, str):
        _spend(_digits_size(value) // _ITEM)
    return jinja_filters.do_int(value, default, base)


def _dict(*args: Any, **kwargs: Any) -> dict[Any, Any]:
    """``dict()``, paying first for the hash table it builds."""
    if args:
        source = args[0]
        pairs = list(source.items()) if isinstance(source, Mapping) else list(source)
        _spend_on_hashing(_keys_of(pairs))
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
        _build(words * 12)
        _spend(words)
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
        _spend_on(value)
        super().__setitem__(name, value)


class _Counted:
    """An iterable spending ``steps`` a item as it is read; its length is the iterable's.

    Loops read their iterable through one, and so do filters reading a lazy
    filter's result. It looks at the clock every ``_CLOCK_STEPS`` steps.
    """

    __slots__ = ("_budget", "_iterable", "_steps")

    def __init__(self, iterable: Iterable[Any], budget: _Budget, steps: int = 1) -> None:
        self._iterable = iterable
        self._budget = budget
        self._steps = steps

    def __len__(self) -> int:
        """The iterable's length; a ``TypeError`` if it has none, as ``LoopContext`` expects."""
        return len(self._iterable)  # type: ignore[arg-type]

    def __bool__(self) -> bool:
        return bool(self._iterable)  # without this, truth would ask __len__

    def __iter__(self) -> Iterator[Any]:
        budget = self._budget
        steps = self._steps
        for item in self._iterable:
            budget.left -= steps
            if budget.left < 0:
                raise TemplateLimitError(TOO_LONG)
            if budget.left < budget.clock_at:
                budget.check_clock()
            yield item


# ---------------------------------------------------------------- compiled code


class _DictsBuiltBounded(NodeTransformer):
    """Turns every dict display ``{k: v}`` into ``environment.bounded_dict([(k, v)])``.

    Jinja2 would build a constant dict while compiling, and Python builds any dict
    in one call; ``bounded_dict`` pays for its hash table first. A call is never
    folded into a constant, so the table is built when the template runs.
    """

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        self.generic_visit(node)
        pairs = nodes.List([nodes.Tuple([p.key, p.value], "load") for p in node.items])
        builder = nodes.EnvironmentAttribute("bounded_dict")
        return nodes.Call(builder, [pairs], [], None, None, lineno=node.lineno)


class _CodeGenerator(CodeGenerator):
    """Jinja2's code generator with loops counted, comparisons charged and ``~`` measured.

    Each ``for`` loop's iterable is compiled as ``environment.counted(...)``, each
    operand of a comparison as ``environment.charged(...)``, each sliced value as
    ``environment.sliced(...)`` and each dict display as ``environment.bounded_dict(...)``
    (see ``BoundedSandbox``).
    """

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        _DictsBuiltBounded().visit(node)
        self._wrapped: dict[int, tuple[nodes.Node, str]] = {}
        for loop in node.find_all(nodes.For):
            self._wrapped[id(loop.iter)] = (loop.iter, "counted")
        for compare in node.find_all(nodes.Compare):
            for operand in (compare.expr, *(op.expr for op in compare.ops)):
                self._wrapped[id(operand)] = (operand, "charged")
        for item in node.find_all(nodes.Getitem):
            if isinstance(item.arg, nodes.Slice):  # Jinja2 slices in Python, not in the sandbox
                self._wrapped[id(item.node)] = (item.node, "sliced")
        super().visit_Template(node, frame)

    def visit(self, node: nodes.Node, *args: Any, **kwargs: Any) -> Any:
        wrapped = getattr(self, "_wrapped", {}).get(id(node))
        if wrapped is None or wrapped[0] is not node:
            return super().visit(node, *args, **kwargs)
        self.write(f"environment.{wrapped[1]}(")
        super().visit(node, *args, **kwargs)
        self.write(")")
        return None

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        if frame.eval_ctx.volatile:
            join = "(markup_join if context.eval_ctx.volatile else str_join)"
        elif frame.eval_ctx.autoescape:
            join = "markup_join"
        else:
            join = "str_join"
        self.write(f"environment.bounded_join({join}, (")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


# ---------------------------------------------------------------- the environment


class BoundedTemplate(jinja2.Template):
    """A template whose ``render`` has a budget of steps and a cap on its output."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        token = _BUDGET.set(_Budget())
        try:
            parts: list[str] = []
            written = 0
            for piece in self.root_render_func(self.new_context(dict(*args, **kwargs))):
                written += len(piece)
                if written > MAX_OUTPUT:
                    raise TemplateLimitError(TOO_MUCH_OUTPUT)
                parts.append(piece)
            return "".join(parts)
        finally:
            _BUDGET.reset(token)


_PRINTED_AS_IS = frozenset({str, float, bool, type(None)})
_SMALL_INT = 1 << 64


def _finalize(value: Any) -> Any:
    """Every ``{{ value }}``: text passes; anything else is measured before it is printed.

    Printing a long number is quadratic work (see ``_int_size``); a small one is free.
    """
    kind = type(value)
    if kind not in _PRINTED_AS_IS and not (kind is int and -_SMALL_INT < value < _SMALL_INT):
        _build(_size(value))
    return value


# Codecs such as idna and punycode take seconds on a few thousand characters, in a
# single call that no step counting can interrupt; a prompt never needs bytes.
_CODEC_METHODS = frozenset({"encode", "decode"})
_JINJA_KEYWORDS = frozenset({"_loop_vars", "_block_vars"})  # passed by Jinja, not the template
_FORMATS = ("format", "format_map")


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox with the bounds this module describes."""

    # Every operator: on long numbers, even - and // are real work.
    intercepted_binops = frozenset({"+", "-", "*", "/", "//", "**", "%"})
    code_generator_class = _CodeGenerator
    template_class = BoundedTemplate

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=_finalize, **options)
        self.filters.update(_BOUNDED_FILTERS)
        for name, function in list(self.filters.items()):
            self.filters[name] = _charging(
                function,
                text=name in _TEXT_FILTERS,
                slow=_SLOW_FILTERS.get(name, 0),
                items=name in _ITEM_FILTERS,
            )
        for name, test in list(self.tests.items()):
            self.tests[name] = _charging(cast(Callable[..., Any], test))
        self.globals["lipsum"] = _lipsum
        self.globals["namespace"] = _Namespace
        self.globals["dict"] = _dict

    # Hooks the compiled code calls (see _CodeGenerator).

    def counted(self, iterable: Iterable[Any]) -> Iterable[Any]:
        budget = _BUDGET.get()
        return iterable if budget is None else _Counted(iterable, budget)

    def charged(self, value: Any) -> Any:
        budget = _BUDGET.get()
        if budget is not None:
            budget.spend_on(value)
        return value

    def bounded_dict(self, pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
        """A dict display ``{k: v, ...}``, paying first for the hash table it builds."""
        _spend_on_hashing(_keys_of(pairs))
        return dict(pairs)

    def sliced(self, value: Any) -> Any:
        _spend(1 + _shallow(value) // _ITEM)
        return value

    def bounded_join(self, join: Callable[[Iterable[Any]], str], parts: tuple[Any, ...]) -> str:
        size = 0
        for part in parts:
            size += _size(part, MAX_SIZE)
        _build(size)
        return join(parts)

    def concat(self, parts: Iterable[str]) -> str:  # type: ignore[override]
        """Joins a macro's or a block's output, which may not exceed 1 MiB either."""
        pieces = list(parts)
        _build(sum(map(len, pieces)))
        return "".join(pieces)

    # Sandbox hooks.

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        """The sandbox's rule, and no codecs: ``encode`` and ``decode`` are refused."""
        if attr in _CODEC_METHODS:
            return False
        return bool(super().is_safe_attribute(obj, attr, value))

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        budget = _BUDGET.get()
        if budget is not None:
            budget.spend(1 + (_shallow(left) + _shallow(right)) // _ITEM)
        _check_binop(operator, left, right)
        return self.binop_table[operator](left, right)

    def call(
        __self,  # the sandbox's own names, so that no keyword of the call can clash
        __context: Context,
        __obj: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        budget = _BUDGET.get()
        if budget is not None:
            receiver = getattr(__obj, "__self__", None)  # a method's own text or list
            budget.spend(CALL_STEPS - 1 + _shallow(receiver) // _ITEM)
            budget.spend_on(*args, *(v for k, v in kwargs.items() if k not in _JINJA_KEYWORDS))
            if isinstance(__obj, LoopContext) and args:  # loop(children) in a recursive loop
                args = (_Counted(args[0], budget), *args[1:])
        args = _check_method(__obj, args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """Jinja2's own, with formatters that refuse fields too large (see ``_SizedFormatter``)."""
        if getattr(value, "__name__", None) not in _FORMATS:
            return None
        if super().wrap_str_format(value) is None:
            return None  # not a str's format or format_map
        text = value.__self__
        kind: type[str] = type(text)
        formatter: SandboxedFormatter
        if isinstance(text, Markup):
            formatter = _SizedEscapeFormatter(self, escape=text.escape)
        else:
            formatter = _SizedFormatter(self)
        is_format_map = value.__name__ == _FORMATS[1]

        def wrapper(*args: Any, **kwargs: Any) -> str:
            if is_format_map:
                if kwargs:
                    raise TypeError("format_map() takes no keyword arguments")
                if len(args) != 1:
                    raise TypeError(f"format_map() takes exactly one argument ({len(args)} given)")
                kwargs, args = args[0], ()
            return kind(formatter.vformat(text, args, kwargs))

        return functools.update_wrapper(wrapper, value)
