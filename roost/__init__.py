"""roost: declarative conversation graphs, run, replayed and drawn.

``load_flow(path)`` reads and validates a flow file, its tools included,
raising ``FlowError`` whose ``problems`` carry file, line, column and message.
"""

from roost.errors import FlowError
from roost.flow import Flow
from roost.loading import load_flow

__version__ = "0.1.0"

__all__ = ["Flow", "FlowError", "__version__", "load_flow"]
