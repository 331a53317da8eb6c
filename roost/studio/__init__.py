"""roost studio: flows edited in a browser and written back into their own YAML files."""
