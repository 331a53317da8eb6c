"""How much a value a template works on weighs, in bytes, and what reading a number costs.

Sizes are counted, not measured by Python: a character counts a byte, a list
item ``ITEM`` bytes, a dict entry twice that, an int its bytes plus the square
of its 64-bit words (printing or reading a long number is quadratic work).
Steps are charged for these sizes and values larger than ``MAX_SIZE`` are
refused (see ``roost.templating.budget``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jinja2.utils import Namespace

if TYPE_CHECKING:
    from collections.abc import Collection

MAX_SIZE = 1 << 20  # bytes: a character is one, a list item eight
ITEM = 8  # bytes a list item or a dict entry's half counts for

TEXT_TYPES = (str, bytes)
SEQUENCE_TYPES = (str, bytes, list, tuple)
_SCALARS = frozenset({bool, float, type(None)})  # ints are measured: they can be long
_COLLECTIONS: tuple[type[Collection[Any]], ...] = (
    *(list, tuple, set, frozenset),
    *(type({}.keys()), type({}.values()), type({}.items())),
)


def int_size(value: int) -> int:
    """An int's bytes, plus the square of its 64-bit words.

    Turning a number into text or back costs Python time quadratic in its
    digits (4,000 digits take milliseconds), so a long number weighs that much
    wherever it is printed, compared or computed with; a number of one word
    weighs its 8 bytes and one more.
    """
    bits = value.bit_length()
    return bits // 8 + (bits // 64) ** 2


def digits_size(text: str) -> int:
    """What reading ``text`` as an int costs, as ``int_size`` of the number it gives."""
    bits = len(text) * 10 // 3  # a decimal digit is about 3.3 bits
    return bits // 8 + (bits // 64) ** 2


def size_of(value: Any, limit: int = MAX_SIZE) -> int:
    """About how many bytes ``value`` holds and prints as; walking stops once past ``limit``.

    Text counts a byte a character, a list, tuple or set ``ITEM`` an item, a dict
    twice that an entry, an int as ``int_size`` says; everything else (a macro, a
    loop) counts 0 beyond the slot it takes. Shared values count each time they are
    reached, as printing them would, so a list that nests itself twice over twenty
    times weighs a million and the walk stops there.
    """
    plain = _plain_size(value)
    if plain is not None:
        return plain
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, TEXT_TYPES):
            total += len(item)
        elif isinstance(item, _COLLECTIONS):
            total += ITEM * len(item)
            if total <= limit:
                stack.extend(item)
        elif isinstance(item, dict):
            total += 2 * ITEM * len(item)
            if total <= limit:
                stack.extend(item.keys())
                stack.extend(item.values())
        elif isinstance(item, int):
            total += int_size(item)
        elif isinstance(item, range):
            total += ITEM * len(item)
        elif isinstance(item, Namespace):
            attrs: dict[str, Any] = object.__getattribute__(item, "_Namespace__attrs")
            stack.append(attrs)
        if total > limit:
            break
    return total


def shallow_size(value: Any) -> int:
    """The bytes of ``value`` itself, not of what its items refer to."""
    plain = _plain_size(value)
    if plain is not None:
        return plain
    if isinstance(value, TEXT_TYPES):
        return len(value)
    if isinstance(value, (list, tuple)):
        return ITEM * len(value)
    if isinstance(value, int):
        return int_size(value)
    return ITEM


def _plain_size(value: Any) -> int | None:
    """The size of a str, an int or a scalar, told by its exact type; None for all else."""
    kind = type(value)  # the exact type: quickest, and most values a template meets are these
    if kind is str:
        return len(value)
    if kind is int:
        return int_size(value)
    if kind in _SCALARS:
        return 0
    return None
