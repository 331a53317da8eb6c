"""roost.visualize."""
