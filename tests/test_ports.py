"""The ports the engine and the stores share: image stores layered as one."""

from __future__ import annotations

from roost.ports import LayeredImages, MemoryImages
from tests.pictures import GIF, digest, png

RED = png((200, 30, 30))


def test_a_layered_store_reads_the_first_that_holds_an_image() -> None:
    first, second = MemoryImages(), MemoryImages()
    second.put(digest(GIF), "image/gif", GIF)
    layered = LayeredImages([first, second])
    assert layered.get(digest(GIF)) == GIF and layered.get(digest(RED)) is None
