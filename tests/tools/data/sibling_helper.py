"""A module next to tools_mod, imported by it as a sibling."""


def shout(word: str) -> str:
    return word.upper() + "!"
