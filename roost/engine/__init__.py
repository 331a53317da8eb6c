"""roost.engine."""
