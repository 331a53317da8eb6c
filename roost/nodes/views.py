"""Lazy message lists: a request's messages are built only when a provider reads them.

Most turns of a scripted run never look at the history, and a real provider
reads it once, so the engine hands a provider a ``LazyMessages`` that knows how
to build the list and does so on first use. Creating one costs the same at
the 10,000th message as at the first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import overload

from roost.messages import ChatMessage


class LazyMessages(Sequence[ChatMessage]):
    """A read-only sequence of messages computed by ``build`` when first read."""

    __slots__ = ("_build", "_items")

    def __init__(self, build: Callable[[], list[ChatMessage]]) -> None:
        self._build = build
        self._items: tuple[ChatMessage, ...] | None = None

    def _materialise(self) -> tuple[ChatMessage, ...]:
        items = self._items
        if items is None:
            items = self._items = tuple(self._build())
        return items

    @overload
    def __getitem__(self, index: int) -> ChatMessage: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ChatMessage]: ...

    def __getitem__(self, index: int | slice) -> ChatMessage | Sequence[ChatMessage]:
        return self._materialise()[index]

    def __len__(self) -> int:
        return len(self._materialise())

    def __iter__(self) -> Iterator[ChatMessage]:
        return iter(self._materialise())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyMessages):
            other = other._materialise()
        if isinstance(other, Sequence):
            return self._materialise() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._materialise())

    def __repr__(self) -> str:
        return f"LazyMessages({list(self._materialise())!r})"
