"""The three-way line merge: the lines ruamel's dump changed, put into the original.

``roost.studio.roundtrip`` dumps the flow's tree before and after an edit; only
the lines that differ between the two dumps replace the author's own, so that
every line the edit did not reach stays byte for byte as written.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


def merge_lines(original: str, before: str, after: str) -> str:
    """``original`` with the lines that differ between ``before`` and ``after`` replaced.

    ``before`` is ruamel's dump of the original, ``after`` that of the edited tree.
    A changed line next to a line ruamel wrote otherwise than the author takes that
    line along (as ruamel writes it); every other line stays the original's own.
    """
    added_newline = bool(original) and not original.endswith("\n")
    lines = (original + "\n" if added_newline else original).splitlines(keepends=True)
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    firm = _firm_boundaries(old, lines)
    pieces: list[tuple[int, int, list[str]]] = []
    for start, end, replaced in _groups(old, new, firm):
        pieces.append((firm[start], firm[end], replaced))
    for o_start, o_end, replaced in reversed(pieces):
        lines[o_start:o_end] = replaced
    merged = "".join(lines)
    return merged[:-1] if added_newline and merged.endswith("\n") else merged


def _firm_boundaries(old: list[str], lines: list[str]) -> dict[int, int]:
    """For each line boundary of ``old`` where it and the original agree, the original's."""
    firm: dict[int, int] = {0: 0, len(old): len(lines)}
    matcher = SequenceMatcher(None, old, lines, autojunk=False)
    loose: set[int] = set()
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            for offset in range(i2 - i1 + 1):
                firm.setdefault(i1 + offset, j1 + offset)
        else:
            loose.update(range(i1 + 1, i2))
            if i1 == i2:
                loose.add(i1)
    for boundary in loose - {0, len(old)}:
        firm.pop(boundary, None)
    return firm


def _groups(
    old: list[str], new: list[str], firm: dict[int, int]
) -> Iterator[tuple[int, int, list[str]]]:
    """The changed stretches of ``old``, widened to firm boundaries, with their new lines."""
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    changes = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    group: list[tuple[str, int, int, int, int]] = []
    span: tuple[int, int] | None = None
    for change in changes:
        start, end = _widen(change[1], change[2], firm, len(old))
        if span is not None and start <= span[1]:
            span = (span[0], max(span[1], end))
            group.append(change)
            continue
        if span is not None:
            yield span[0], span[1], _rewritten(old, new, span, group)
        span, group = (start, end), [change]
    if span is not None:
        yield span[0], span[1], _rewritten(old, new, span, group)


def _widen(start: int, end: int, firm: dict[int, int], size: int) -> tuple[int, int]:
    while start not in firm:
        start -= 1
    while end not in firm and end < size:
        end += 1
    return start, end


def _rewritten(
    old: list[str],
    new: list[str],
    span: tuple[int, int],
    group: list[tuple[str, int, int, int, int]],
) -> list[str]:
    lines: list[str] = []
    at = span[0]
    for _, i1, i2, j1, j2 in group:
        lines += old[at:i1] + new[j1:j2]
        at = i2
    return lines + old[at : span[1]]
