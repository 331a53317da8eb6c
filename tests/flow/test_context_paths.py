"""A context file's pattern stays inside the flow's folder: no absolute path, no '..'."""

from __future__ import annotations

import pytest

from roost.flow.context_paths import context_escape


@pytest.mark.parametrize("pattern", ["notes.md", "docs/*.md", "a..b/c.txt", "docs/**/x..md"])
def test_a_pattern_inside_the_folder_is_fine(pattern: str) -> None:
    assert context_escape(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        ("/etc/passwd", "is an absolute path"),
        ("C:\\Users\\x", "is an absolute path"),
        ("\\\\server\\share\\x", "is an absolute path"),
        ("../secrets.txt", "climbs out of the flow file's folder with '..'"),
        ("docs/../../x", "climbs out"),
        ("docs\\..\\..\\x", "climbs out"),
    ],
)
def test_a_pattern_that_reaches_outside_says_how(pattern: str, why: str) -> None:
    escape = context_escape(pattern)
    assert escape is not None and escape.startswith(why)
