"""The tool of channel.yaml (a replay answers it from the record, never imports this)."""


def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b
