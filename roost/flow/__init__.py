"""The flow language: reading, validating and describing flow files.

``read_flow(path)`` and ``load_flow_text(text, path)`` check the language alone;
``roost.load_flow(path)`` checks a flow's tools as well.
"""

from roost.flow.loader import Checked, check_flow_file, check_flow_text, load_flow_text, read_flow
from roost.flow.models import Flow

__all__ = [
    "Checked",
    "Flow",
    "check_flow_file",
    "check_flow_text",
    "load_flow_text",
    "read_flow",
]
