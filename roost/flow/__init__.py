"""The flow language: reading, validating and describing flow files.

``read_flow(path)`` and ``load_flow_text(text, path)`` check the language alone;
``roost.load_flow(path)`` checks a flow's tools as well. ``load_recorded_flow``
reads a run's recorded flow text without the environment.
"""

from roost.flow.loader import (
    Checked,
    check_flow_file,
    check_flow_text,
    load_flow_text,
    load_recorded_flow,
    read_flow,
)
from roost.flow.models import Flow

__all__ = [
    "Checked",
    "Flow",
    "check_flow_file",
    "check_flow_text",
    "load_flow_text",
    "load_recorded_flow",
    "read_flow",
]
