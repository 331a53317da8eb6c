"""The steps, the time and the sizes one render may spend, and what refuses more.

A render runs with a fresh ``Budget`` in ``CURRENT_BUDGET`` (``budgeted()``, or
``BoundedTemplate.render``); the compiled template, the filters and the sandbox
hooks spend from it, and ``pay_to_build`` refuses a value past ``MAX_SIZE``
before it is built. Outside a render (no budget set) nothing is counted, but
sizes are still refused.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from roost.errors import TemplateRenderError
from roost.templating.sizes import ITEM, MAX_SIZE, size_of

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

MAX_STEPS = 1_000_000
CALL_STEPS = 10  # a call (a macro's above all) costs Jinja2 ten times a loop iteration or more
MAX_OUTPUT = 1 << 20  # characters of rendered text
MAX_DIGITS = 4300  # Python's own limit for printing an int
DEADLINE = 10.0  # seconds: the wall-clock bound of one render, behind the counted steps
MAX_BITS = int(MAX_DIGITS * math.log2(10))
CLOCK_STEPS = 256  # a loop looks at the clock each time it has spent this many steps
# Steps for each item that a filter handles in Python (an attribute looked up, a key
# computed, an item passed along a lazy filter), on top of the item's size.
ITEM_STEPS = 2

TOO_LONG = f"the template ran too long (more than {MAX_STEPS:,} steps)"
TOO_SLOW = f"the template ran too long (more than {DEADLINE:g} seconds)"
TOO_BIG = "the template would build a value larger than 1 MiB"
TOO_MUCH_OUTPUT = "the template's output would exceed 1 MiB"
TOO_LONG_NUMBER = f"the template would build a number of more than {MAX_DIGITS:,} digits"


class TemplateLimitError(TemplateRenderError):
    """A template asked for more steps, a larger value or more output than a render allows."""


class Budget:
    """The steps left to one render, and the time by which it must be done."""

    __slots__ = ("clock_at", "deadline", "left")

    def __init__(self) -> None:
        self.left = MAX_STEPS
        self.deadline = time.monotonic() + DEADLINE
        self.clock_at = MAX_STEPS - CLOCK_STEPS  # loops look at the clock below this

    def spend(self, steps: int) -> None:
        self.left -= steps
        if self.left < 0:
            raise TemplateLimitError(TOO_LONG)
        self.check_clock()  # a filter, call or operator: the clock costs little beside it

    def check_clock(self) -> None:
        self.clock_at = self.left - CLOCK_STEPS
        if time.monotonic() > self.deadline:
            raise TemplateLimitError(TOO_SLOW)

    def spend_on(self, *values: Any) -> None:
        """One step, and one for every 8 bytes of ``values``."""
        steps = 1
        for value in values:
            if type(value) is str:
                steps += len(value) // ITEM
            else:
                steps += size_of(value, self.left * ITEM) // ITEM
        self.spend(steps)


CURRENT_BUDGET: ContextVar[Budget | None] = ContextVar("roost_template_budget", default=None)


def spend_on(*values: Any) -> None:
    """Spends from the current render's budget one step, and one for every 8 bytes of ``values``."""
    budget = CURRENT_BUDGET.get()
    if budget is not None:
        budget.spend_on(*values)


def spend(steps: int) -> None:
    """Spends ``steps`` from the current render's budget (nothing outside a render)."""
    budget = CURRENT_BUDGET.get()
    if budget is not None:
        budget.spend(steps)


@contextmanager
def budgeted() -> Iterator[Budget]:
    """Gives the code inside ``with budgeted():`` a fresh budget of steps."""
    budget = Budget()
    token = CURRENT_BUDGET.set(budget)
    try:
        yield budget
    finally:
        CURRENT_BUDGET.reset(token)


def check_size(size: int) -> None:
    """Refuses a value of ``size`` bytes past ``MAX_SIZE``, spending nothing."""
    if size > MAX_SIZE:
        raise TemplateLimitError(TOO_BIG)


def pay_to_build(size: int) -> None:
    """Before building ``size`` bytes: refused past 1 MiB, and a step for every 8."""
    if size > MAX_SIZE:
        raise TemplateLimitError(TOO_BIG)
    spend(size // ITEM)


def check_number_bits(bits: float) -> None:
    """Refuses a number of ``bits`` bits, longer than ``MAX_DIGITS`` digits."""
    if bits > MAX_BITS:
        raise TemplateLimitError(TOO_LONG_NUMBER)


def spend_on_hashing(keys: Iterable[Any]) -> list[Any]:
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
    spend(probes)
    return items


def keys_of(pairs: Iterable[Any]) -> Iterator[Any]:
    """The first item of every two-item pair (what a dict is built from)."""
    for pair in pairs:
        if isinstance(pair, (tuple, list)) and len(pair) == 2:
            yield pair[0]


class Counted:
    """An iterable spending ``steps`` a item as it is read; its length is the iterable's.

    Loops read their iterable through one, and so do filters reading a lazy
    filter's result. It looks at the clock every ``CLOCK_STEPS`` steps.
    """

    __slots__ = ("_budget", "_iterable", "_steps")

    def __init__(self, iterable: Iterable[Any], budget: Budget, steps: int = 1) -> None:
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
