"""Ctrl-C held while a batch of events is written to several logs.

Ctrl-C raises KeyboardInterrupt between two bytecodes (see the CLI's run command); one
landing between a primary log's write and a copy's would leave the copy a batch short.
While a batch is being written, an interrupt is held and raised once every log has it.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

_writing = 0
_held = False


def interrupt_now_or_after_the_batch() -> None:
    """Raises KeyboardInterrupt, or holds it until the batch being written is in every log."""
    global _held
    if _writing:
        _held = True
        return
    raise KeyboardInterrupt


@contextmanager
def writing_a_batch() -> Iterator[None]:
    """Holds a Ctrl-C that lands inside the block; raises it once the outermost block ends."""
    global _writing, _held
    _writing += 1
    try:
        yield
    finally:
        _writing -= 1
    if _held and not _writing:
        _held = False
        raise KeyboardInterrupt
