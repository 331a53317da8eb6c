"""The three-way line merge: only the lines ruamel's two dumps differ in replace the author's."""

from __future__ import annotations

from roost.studio._linemerge import merge_lines

# The author's text, and ruamel's dump of it: the comment's gap is written otherwise.
ORIGINAL = "a: 1   # mine\nb: 2\nc: 3\nd: 4\n"
DUMPED = "a: 1 # mine\nb: 2\nc: 3\nd: 4\n"


def test_every_line_the_edit_did_not_reach_stays_as_the_author_wrote_it() -> None:
    assert merge_lines(ORIGINAL, DUMPED, DUMPED.replace("d: 4", "d: 5")) == (
        "a: 1   # mine\nb: 2\nc: 3\nd: 5\n"
    )
    assert merge_lines(ORIGINAL, DUMPED, DUMPED.replace("c: 3\n", "c: 3\ne: 6\n")) == (
        "a: 1   # mine\nb: 2\nc: 3\ne: 6\nd: 4\n"
    )
    assert merge_lines(ORIGINAL, DUMPED, DUMPED.replace("b: 2\n", "")) == (
        "a: 1   # mine\nc: 3\nd: 4\n"
    )


def test_a_changed_line_takes_along_the_lines_beside_it_that_ruamel_wrote_otherwise() -> None:
    # ruamel wrote the author's two blank lines as one: changing the line after them
    # rewrites the stretch as ruamel does, since no firm boundary lies between.
    original = "a: 1\nb: 2\n\n\nc: 3\n"
    dumped = "a: 1\nb: 2\n\nc: 3\n"
    assert merge_lines(original, dumped, dumped.replace("c: 3", "c: 4")) == "a: 1\nb: 2\n\nc: 4\n"
    assert merge_lines(original, dumped, dumped.replace("a: 1", "a: 0")) == (
        "a: 0\nb: 2\n\n\nc: 3\n"
    )


def test_a_text_without_a_final_newline_stays_without_one() -> None:
    assert merge_lines(ORIGINAL.rstrip("\n"), DUMPED, DUMPED.replace("d: 4", "d: 5")) == (
        "a: 1   # mine\nb: 2\nc: 3\nd: 5"
    )
    assert merge_lines("", "", "roost: 1\n") == "roost: 1\n"
