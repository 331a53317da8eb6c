"""A request's messages built only when read, once, and then equal to the list they hold."""

from __future__ import annotations

from roost.messages import AssistantMessage, ChatMessage, UserMessage
from roost.nodes.views import LazyMessages

HELLO: list[ChatMessage] = [UserMessage(content="hi"), AssistantMessage(content="hello")]


class Builder:
    """Builds HELLO and counts how often it was asked to."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> list[ChatMessage]:
        self.calls += 1
        return list(HELLO)


def test_nothing_is_built_until_the_messages_are_read_and_then_only_once() -> None:
    build = Builder()
    messages = LazyMessages(build)
    assert build.calls == 0
    assert len(messages) == 2 and messages[1] == HELLO[1]
    assert list(messages) == HELLO and messages[:1] == (HELLO[0],)
    assert build.calls == 1


def test_lazy_messages_equal_any_sequence_of_the_same_messages() -> None:
    messages = LazyMessages(Builder())
    assert messages == HELLO and messages == tuple(HELLO)
    assert messages == LazyMessages(Builder())
    assert messages != HELLO[:1] and messages != LazyMessages(list)
    assert hash(messages) == hash(tuple(HELLO))
    assert (messages == "hi") is False
