"""YAML syntax errors in plain words.

libyaml names what its grammar expected ("did not find expected key while
parsing a block mapping"); a person wants to hear what is wrong with the line
("this line is indented deeper than the keys of the mapping at line 3"). The
common mistakes, indentation above all, are told that way; anything else keeps
libyaml's words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import yaml


def syntax_error(error: yaml.MarkedYAMLError, text: str) -> tuple[int, int, str]:
    """(line, column, message) for a YAML syntax error in ``text``."""
    mark = error.problem_mark or error.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    lines = text.splitlines()
    here = lines[line - 1] if 0 < line <= len(lines) else ""
    char = here[col - 1] if 0 < col <= len(here) else ""
    since = error.context_mark.line + 1 if error.context_mark is not None else line
    problem = one_line(error.problem or "syntax error")
    context = one_line(error.context or "")
    plain = _plain(problem, context, here, col, char, since)
    if plain is not None:
        return line, col, f"invalid YAML: {plain}"
    where = f" at line {since}" if error.context_mark is not None and since != line else ""
    suffix = f" ({context}{where})" if context else ""
    return line, col, f"invalid YAML: {problem}{suffix}"


def _plain(problem: str, context: str, here: str, col: int, char: str, since: int) -> str | None:
    """The mistake behind a libyaml message, in plain words, when it is a common one."""
    before = here[: col - 1]
    if char == "\t" or (problem.startswith("found a tab") or "tab character" in problem):
        return "a tab ('\\t') in the indentation: YAML indents with spaces only"
    if problem.startswith("mapping values are not allowed"):
        if ": " in before or before.rstrip().endswith(":"):
            return (
                "a value holding ': ' must be quoted (\"...\"), or the key is missing a line break"
            )
        return (
            "this line is indented deeper than the line above it, which already has its value; "
            "indent it like its neighbours"
        )
    if problem == "did not find expected key" and "block mapping" in context:
        if char == "-":
            return (
                f"a list item ('-') among the keys of the mapping at line {since}: "
                "indent the list under its key"
            )
        return (
            f"this line is not indented like the keys of the mapping at line {since} "
            "(every key of a mapping starts in the same column)"
        )
    if problem.startswith("did not find expected '-'"):
        return (
            f"this line is not indented like the items of the list at line {since} "
            "(every '- ' of a list starts in the same column)"
        )
    if problem == "could not find expected ':'":
        return f"the key at line {since} has no ':' after it (write 'key: value')"
    if problem.startswith("did not find expected ',' or '}'"):
        entry = before[max(before.rfind("{"), before.rfind(",")) + 1 :]
        if char == ":" and ": " in entry:  # {role: You are: a helper}: a second ': ' in one entry
            key = entry.split(":", 1)[0].strip()
            return (
                f"the value of {key!r} holds an unquoted ': ' (column {col}): quote the value "
                '("...")'
            )
        return f"the '{{' at line {since} is not closed: a ',' or '}}' is missing"
    if problem.startswith("did not find expected ',' or ']'"):
        return f"the '[' at line {since} is not closed: a ',' or ']' is missing"
    if problem == "found unexpected end of stream" and "quoted scalar" in context:
        return f"the quoted text that starts at line {since} is never closed"
    if problem.startswith("block sequence entries are not allowed"):
        return "a list item ('- ') cannot follow a key on its line: start the list on the next line"
    if problem == "found character that cannot start any token" and char:
        return f'{char!r} cannot start a value here: quote the value ("...")'
    return None


def one_line(text: str) -> str:
    """``text`` with its white space (line breaks included) made single spaces."""
    return " ".join(text.split())
