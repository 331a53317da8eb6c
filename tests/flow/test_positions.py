"""Where a key or a value stands: its own place, else its nearest located parent's key."""

from __future__ import annotations

from roost.flow.positions import Positions


def test_a_key_and_its_value_each_have_their_place_and_the_unknown_their_parent_s() -> None:
    places = Positions(
        keys={("agents",): (3, 1), ("agents", "a"): (4, 3), ("agents", "a", "role"): (5, 5)},
        values={("agents", "a", "role"): (5, 11)},
    )
    assert places.key(("agents", "a", "role")) == (5, 5)
    assert places.value(("agents", "a", "role")) == (5, 11)
    assert places.value(("agents", "a")) == (4, 3)  # no value place: the key's
    assert places.key(("agents", "a", "tools", 0)) == (4, 3)  # the nearest located parent
    assert places.key(("channels", "c")) == (1, 1)  # nothing located: the file's start
