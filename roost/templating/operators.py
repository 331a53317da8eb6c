"""Operators a template uses (``*``, ``**``, ``+``, ``%``) refused before they build too much."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from roost.templating.budget import check_number_bits, pay_to_build, spend
from roost.templating.sizes import MAX_SIZE, SEQUENCE_TYPES, shallow_size, size_of

if TYPE_CHECKING:
    from collections.abc import Iterator

_PAREN = re.compile(r"[()]")
# A %-field up to its conversion character, or the "%(" that opens a mapping key.
_PRINTF_FIELD = re.compile(r"%(?:\(|[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?.)", re.S)
_PRINTF_SPEC = re.compile(r"[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?.", re.S)


def format_width(text: str) -> int:
    """A width or precision written in a format; a huge one is simply too big."""
    return int(text) if len(text) <= 9 else MAX_SIZE + 1


def printf_numbers(template: str) -> Iterator[str]:
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


def check_percent(template: str, values: Any) -> None:
    """Refuses ``template % values`` if its widths, precisions and values could exceed 1 MiB.

    Reading the fields is Python work: a step for each ``%``.
    """
    spend(template.count("%"))
    size = len(template) + size_of(values)
    star = False
    for number in printf_numbers(template):
        if number == "*":
            star = True
        else:
            size += format_width(number)
    if star and isinstance(values, tuple):
        size += sum(abs(v) for v in values if isinstance(v, int))
    pay_to_build(size)


def check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuses ``left <operator> right`` if it would build too large a value or number."""
    if operator == "*":
        if isinstance(left, int) and isinstance(right, int):
            check_number_bits(left.bit_length() + right.bit_length())
        elif isinstance(right, int) and isinstance(left, SEQUENCE_TYPES):
            pay_to_build(shallow_size(left) * max(right, 0))
        elif isinstance(left, int) and isinstance(right, SEQUENCE_TYPES):
            pay_to_build(shallow_size(right) * max(left, 0))
    elif operator == "**":
        if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            check_number_bits(right * math.log2(abs(left)))
    elif operator == "+":
        if isinstance(left, SEQUENCE_TYPES) and isinstance(right, SEQUENCE_TYPES):
            pay_to_build(shallow_size(left) + shallow_size(right))
    elif operator == "%" and isinstance(left, str):
        check_percent(left, right)
