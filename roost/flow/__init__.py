"""The flow language: loading, validating and describing flow files."""

from roost.flow.loader import load_flow, load_flow_text
from roost.flow.models import Flow

__all__ = ["Flow", "load_flow", "load_flow_text"]
