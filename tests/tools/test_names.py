"""Wire names: the provider-safe names a flow's tool references are offered under."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from roost.tools.names import WIRE_NAME, wire_name


def test_wire_names() -> None:
    assert wire_name("math#add") == "math__add"
    assert wire_name("@@look up.v2") == "look_up_v2"
    long_a, long_b = wire_name("x" * 100 + "a"), wire_name("x" * 100 + "b")
    assert len(long_a) == 64 and long_a != long_b


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=0, max_size=120))
def test_wire_names_are_always_provider_safe(reference: str) -> None:
    assert WIRE_NAME.match(wire_name(reference))
