"""A child's stderr: only its tail is kept, and its last words are quoted shortly."""

from __future__ import annotations

import asyncio
import sys

from roost.tools.stderr_tail import STDERR_QUOTE, STDERR_TAIL, StderrTail


async def last_words(script: str) -> str:
    """What a StderrTail quotes of a Python child that runs ``script``."""
    tail = StderrTail()
    try:
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-c", script, stderr=tail.writer
        )
        tail.child_started()
        await child.wait()
        return tail.last_line()
    finally:
        tail.close()


async def test_the_last_line_that_is_not_blank_is_quoted_with_its_spaces_folded() -> None:
    script = "import sys; sys.stderr.write('starting\\nError:   no   such   file\\n\\n  \\n')"
    assert await last_words(script) == "Error: no such file"


async def test_a_long_last_line_is_cut_to_the_quote() -> None:
    said = await last_words(f"import sys; sys.stderr.write('x' * {STDERR_QUOTE * 10})")
    assert said == "x" * (STDERR_QUOTE - 3) + "..."


async def test_what_came_before_the_tail_is_forgotten() -> None:
    # The first words, then more blank lines than the tail holds: nothing is left to quote.
    script = f"import sys; sys.stderr.write('first words\\n' + '\\n' * {STDERR_TAIL * 2})"
    assert await last_words(script) == ""
    kept = f"import sys; sys.stderr.write('first words\\n' + '\\n' * {STDERR_TAIL // 2})"
    assert await last_words(kept) == "first words"


async def test_closing_twice_is_safe() -> None:
    tail = StderrTail()
    tail.close()
    tail.close()
    assert tail.last_line() == ""
