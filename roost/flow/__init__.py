"""The flow language: loading, validating and describing flow files."""

from roost.flow.loader import Checked, check_flow_file, check_flow_text, load_flow, load_flow_text
from roost.flow.models import Flow

__all__ = [
    "Checked",
    "Flow",
    "check_flow_file",
    "check_flow_text",
    "load_flow",
    "load_flow_text",
]
