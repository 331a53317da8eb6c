"""roost.store."""
