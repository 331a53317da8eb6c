"""Python tools of the tools-demo flow (found next to the flow file)."""


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b
