"""roost: declarative conversation graphs, run, replayed and drawn.

``load_flow(path)`` reads and validates a flow file, its tools included,
raising ``FlowError`` whose ``problems`` carry file, line, column and message.

Names are imported on first use, so that ``import roost`` (and the console
script's start-up, which a person may interrupt) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from roost.errors import FlowError
    from roost.flow import Flow
    from roost.loading import load_flow

__version__ = "0.1.0"

__all__ = ["Flow", "FlowError", "__version__", "load_flow"]

_LAZY = {"Flow": "roost.flow", "FlowError": "roost.errors", "load_flow": "roost.loading"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'roost' has no attribute {name!r}")
