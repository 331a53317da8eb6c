"""Same module name as data/tools_mod.py, in another flow folder."""


def add(a: int, b: int = 2) -> int:
    """Subtracts instead, so the tests can tell the two modules apart."""
    return a - b
