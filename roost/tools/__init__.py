"""roost.tools."""
