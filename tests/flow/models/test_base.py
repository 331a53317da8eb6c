"""Every flow model is strict: no unknown key, no value of another type, no change once made."""

from __future__ import annotations

import pydantic
import pytest

from roost.flow.models import Strict


class Sample(Strict):
    count: int = 0
    on: bool = False


@pytest.mark.parametrize(
    "data",
    [
        {"cuont": 1},  # a key the model does not have
        {"count": True},  # true is no number
        {"count": 2.0},  # 2.0 is no count
        {"on": 0},  # 0 is no boolean
    ],
)
def test_a_flow_model_refuses_what_it_was_not_written_for(data: dict[str, object]) -> None:
    with pytest.raises(pydantic.ValidationError):
        Sample.model_validate(data)


def test_a_flow_model_once_made_is_not_changed() -> None:
    sample = Sample.model_validate({"count": 2, "on": True})
    assert (sample.count, sample.on) == (2, True)
    with pytest.raises(pydantic.ValidationError):
        sample.count = 3  # type: ignore[misc]
