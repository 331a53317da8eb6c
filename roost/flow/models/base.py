"""The base of every flow model, and what several parts of the language share."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

InterruptPolicy = Literal["NEVER", "ALWAYS"]


class Strict(BaseModel):
    """Base for every flow model: unknown keys are errors, models are immutable.

    Strict: a YAML value must already have the key's type (true is no number, 2.0
    no count, 0 no boolean); a value that is only a ``${NAME}`` placeholder gets
    the YAML type of what it expands to before validation, so it still fits.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True)
