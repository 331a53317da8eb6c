"""roost.nodes."""
