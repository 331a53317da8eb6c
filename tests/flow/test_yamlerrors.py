"""A YAML syntax error is told in plain words, at the place the mistake is."""

from __future__ import annotations

import pytest

from tests.flow.conftest import problems


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (
            "roost: 1\nagents:\n  a:\n    role: x\n   provider: p\n",
            "5:4",
            "not indented like the keys of the mapping at line 3",
        ),
        ("roost: 1\nagents:\n  a: {}\n    b: {}\n", "4:5", "not indented like the keys of the m"),
        (
            "roost: 1\nchannels:\n  c:\n    members:\n    - a\n  - b\n",
            "6:3",
            "a list item ('-') among the keys of the mapping at line 3",
        ),
        ("roost: 1\nname: a: b\n", "2:8", "a value holding ': ' must be quoted"),
        ("roost: 1\nagents\n  a: {}\n", "3:4", "the key at line 2 has no ':' after it"),
        ('roost: 1\nname: "abc\n', "3:1", "the quoted text that starts at line 2 is never closed"),
        ("roost: 1\nname: [a, b\n", "3:1", "the '[' at line 2 is not closed"),
        (
            "roost: 1\nagents:\n  a: {role: You are: a helper}\n",
            "3:20",
            "the value of 'role' holds an unquoted ': ' (column 20): quote the value",
        ),
        ("roost: 1\nagents:\n  a: {role: x, b: c\n", "4:1", "the '{' at line 3 is not closed"),
        ("roost: 1\nname: *nope\n", "2:7", "'*nope' names no anchor '&nope' written before it"),
        ("roost: 1\nagents:\n\ta: {}\n", "3:1", "a tab ('\\t') in the indentation"),
        ("roost: 1\nname: @x\n", "2:7", "'@' cannot start a value here"),
    ],
)
def test_yaml_mistakes_are_told_in_plain_words(text: str, where: str, words: str) -> None:
    found = problems(text)
    assert len(found) == 1
    assert found[0].startswith(f"flow.yaml:{where}: error: invalid YAML: "), found[0]
    assert words in found[0]
