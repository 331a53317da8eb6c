"""roost.flow."""
