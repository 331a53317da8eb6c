"""Rendering templates in a sandbox bounded in steps, sizes, output and time."""
