"""The neutral conversation every importer reads into: who speaks, in the order they first do."""

from __future__ import annotations

from roost.importers.model import Conversation, ImportedTurn


def test_the_speakers_are_named_once_in_the_order_they_first_speak() -> None:
    said = [("user", "Hi"), ("bot", "Hello"), ("user", "Bye"), ("critic", "Hm"), ("bot", "Ok")]
    talk = Conversation([ImportedTurn(speaker, text, []) for speaker, text in said])
    assert talk.speakers == ["user", "bot", "critic"]
