"""The bounded sandbox: Jinja2's immutable sandbox with every bound this package describes."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, cast

import jinja2
from jinja2.runtime import Context, LoopContext
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter
from markupsafe import Markup

from roost.templating.budget import (
    CALL_STEPS,
    CURRENT_BUDGET,
    MAX_OUTPUT,
    TOO_MUCH_OUTPUT,
    Budget,
    Counted,
    TemplateLimitError,
    keys_of,
    pay_to_build,
    spend,
    spend_on_hashing,
)
from roost.templating.codegen import BoundedCodeGenerator
from roost.templating.filters import BOUNDED_GLOBALS, bounded_filters, bounded_tests
from roost.templating.methods import SizedEscapeFormatter, SizedFormatter, check_method_call
from roost.templating.operators import check_binop
from roost.templating.sizes import ITEM, MAX_SIZE, shallow_size, size_of

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable


class BoundedTemplate(jinja2.Template):
    """A template whose ``render`` has a budget of steps and a cap on its output."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        token = CURRENT_BUDGET.set(Budget())
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
            CURRENT_BUDGET.reset(token)


_PRINTED_AS_IS = frozenset({str, float, bool, type(None)})
_SMALL_INT = 1 << 64


def _finalize(value: Any) -> Any:
    """Every ``{{ value }}``: text passes; anything else is measured before it is printed.

    Printing a long number is quadratic work (see ``int_size``); a small one is free.
    """
    kind = type(value)
    if kind not in _PRINTED_AS_IS and not (kind is int and -_SMALL_INT < value < _SMALL_INT):
        pay_to_build(size_of(value))
    return value


# Codecs such as idna and punycode take seconds on a few thousand characters, in a
# single call that no step counting can interrupt; a prompt never needs bytes.
_CODEC_METHODS = frozenset({"encode", "decode"})
_JINJA_KEYWORDS = frozenset({"_loop_vars", "_block_vars"})  # passed by Jinja, not the template
_FORMATS = ("format", "format_map")


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox with the bounds this package describes."""

    # Every operator: on long numbers, even - and // are real work.
    intercepted_binops = frozenset({"+", "-", "*", "/", "//", "**", "%"})
    code_generator_class = BoundedCodeGenerator
    template_class = BoundedTemplate

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=_finalize, **options)
        self.filters.update(bounded_filters(self.filters))
        self.tests.update(bounded_tests(cast("dict[str, Callable[..., Any]]", self.tests)))
        self.globals.update(BOUNDED_GLOBALS)

    # Hooks the compiled code calls (see BoundedCodeGenerator).

    def counted(self, iterable: Iterable[Any]) -> Iterable[Any]:
        budget = CURRENT_BUDGET.get()
        return iterable if budget is None else Counted(iterable, budget)

    def charged(self, value: Any) -> Any:
        budget = CURRENT_BUDGET.get()
        if budget is not None:
            budget.spend_on(value)
        return value

    def bounded_dict(self, pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
        """A dict display ``{k: v, ...}``, paying first for the hash table it builds."""
        spend_on_hashing(keys_of(pairs))
        return dict(pairs)

    def sliced(self, value: Any) -> Any:
        spend(1 + shallow_size(value) // ITEM)
        return value

    def bounded_join(self, join: Callable[[Iterable[Any]], str], parts: tuple[Any, ...]) -> str:
        size = 0
        for part in parts:
            size += size_of(part, MAX_SIZE)
        pay_to_build(size)
        return join(parts)

    def concat(self, parts: Iterable[str]) -> str:  # type: ignore[override]
        """Joins a macro's or a block's output, which may not exceed 1 MiB either."""
        pieces = list(parts)
        pay_to_build(sum(map(len, pieces)))
        return "".join(pieces)

    # Sandbox hooks.

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        """The sandbox's rule, and no codecs: ``encode`` and ``decode`` are refused."""
        if attr in _CODEC_METHODS:
            return False
        return bool(super().is_safe_attribute(obj, attr, value))

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        budget = CURRENT_BUDGET.get()
        if budget is not None:
            budget.spend(1 + (shallow_size(left) + shallow_size(right)) // ITEM)
        check_binop(operator, left, right)
        return self.binop_table[operator](left, right)

    def call(
        __self,  # the sandbox's own names, so that no keyword of the call can clash
        __context: Context,
        __obj: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        budget = CURRENT_BUDGET.get()
        if budget is not None:
            receiver = getattr(__obj, "__self__", None)  # a method's own text or list
            budget.spend(CALL_STEPS - 1 + shallow_size(receiver) // ITEM)
            budget.spend_on(*args, *(v for k, v in kwargs.items() if k not in _JINJA_KEYWORDS))
            if isinstance(__obj, LoopContext) and args:  # loop(children) in a recursive loop
                args = (Counted(args[0], budget), *args[1:])
        args = check_method_call(__obj, args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """Jinja2's own, with formatters that refuse fields too large (see ``SizedFormatter``)."""
        if getattr(value, "__name__", None) not in _FORMATS:
            return None
        if super().wrap_str_format(value) is None:
            return None  # not a str's format or format_map
        text = value.__self__
        kind: type[str] = type(text)
        formatter: SandboxedFormatter
        if isinstance(text, Markup):
            formatter = SizedEscapeFormatter(self, escape=text.escape)
        else:
            formatter = SizedFormatter(self)
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
