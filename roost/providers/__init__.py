"""roost.providers."""
