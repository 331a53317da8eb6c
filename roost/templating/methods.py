"""Method calls (str, bytes, int, dict) and ``str.format``, refused before they build too much."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sized
from types import BuiltinMethodType, MethodType
from typing import Any

from jinja2.sandbox import SandboxedEscapeFormatter, SandboxedFormatter

from roost.templating.budget import ITEM_STEPS, check_size, pay_to_build, spend, spend_on_hashing
from roost.templating.operators import format_width
from roost.templating.sizes import TEXT_TYPES, shallow_size, size_of

_SPEC_NUMBER = re.compile(r"\d+")


def _arg(args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str) -> Any:
    if len(args) > index:
        return args[index]
    return kwargs.get(name)


def check_method_call(
    method: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[Any, ...]:
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
            pay_to_build(length)
        return args
    if name == "fromkeys" and args:  # dict.fromkeys, reached through any dict
        return (spend_on_hashing(args[0]), *args[1:])
    if name == "maketrans" and args:  # str.maketrans, reached through any text
        table = args[0]
        spend(ITEM_STEPS * len(table) if isinstance(table, Sized) else 0)
        if isinstance(table, Mapping):
            spend_on_hashing(table.keys())
    if not isinstance(receiver, TEXT_TYPES):
        return args
    if name in ("center", "ljust", "rjust", "zfill"):
        width = _arg(args, kwargs, 0, "width")
        if isinstance(width, int):
            pay_to_build(width)
    elif name == "expandtabs":
        tabsize = _arg(args, kwargs, 0, "tabsize")
        tab = "\t" if isinstance(receiver, str) else b"\t"
        if isinstance(tabsize, int):
            pay_to_build(len(receiver) + receiver.count(tab) * tabsize)  # type: ignore[arg-type]
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], TEXT_TYPES):
        pay_to_build(replaced_size(receiver, args[0], args[1], args[2] if len(args) > 2 else -1))
    elif name == "join" and args:
        items = list(args[0])
        pay_to_build(sum(size_of(item) for item in items) + len(receiver) * max(len(items) - 1, 0))
        return (items, *args[1:])
    elif name == "translate" and args and isinstance(args[0], Mapping | list | tuple):
        table = args[0].values() if isinstance(args[0], Mapping) else args[0]
        longest = max((shallow_size(v) for v in table), default=1)
        pay_to_build(len(receiver) * max(longest, 1))
    return args


def replaced_size(text: Any, old: Any, new: Any, count: Any) -> int:
    """The length of ``text.replace(old, new, count)``, computed without replacing."""
    times = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        times = min(times, count)
    return int(len(text) + times * (shallow_size(new) - len(old)))


# ---------------------------------------------------------------- str.format


class SizedFormatter(SandboxedFormatter):
    """The sandbox's ``str.format``, refusing fields whose widths would build more than 1 MiB."""

    _built = 0

    def vformat(self, format_string: str, args: Any, kwargs: Any) -> str:
        self._built = len(format_string)
        # The formatter reads the string in Python, a piece between braces at a time.
        spend(format_string.count("{") + format_string.count("}"))
        return super().vformat(format_string, args, kwargs)

    def format_field(self, value: Any, format_spec: str) -> Any:
        size = size_of(value) + sum(format_width(n) for n in _SPEC_NUMBER.findall(format_spec))
        self._built += size
        check_size(self._built)
        pay_to_build(size)
        return super().format_field(value, format_spec)


class SizedEscapeFormatter(SizedFormatter, SandboxedEscapeFormatter):
    """The same for ``Markup.format``."""
