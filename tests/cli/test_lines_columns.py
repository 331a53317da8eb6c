"""``roost runs``'s table: the columns a borderless rich Table lays out, written in one go."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table
from rich.text import Text

from roost.cli.lines import print_columns

# Control characters aside (a rich Table drops some that its plain printing keeps),
# and code points Unicode has not assigned, which rich folds at as if they were
# no character at all: no run id or flow name holds one.
cells = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Cn"]), max_size=12
)


def test_a_column_of_zero_width_text_is_printed_empty_as_rich_does() -> None:
    out = io.StringIO()
    print_columns(
        Console(file=out, force_terminal=False, width=80), ("\u200b", "id"), [("\ufeff", "r1")]
    )
    assert out.getvalue() == "   id \n   r1 \n"


@given(
    columns=st.integers(min_value=1, max_value=4).flatmap(
        lambda width: st.tuples(
            st.lists(cells, min_size=width, max_size=width),
            st.lists(st.lists(cells, min_size=width, max_size=width), max_size=5),
        )
    )
)
def test_the_columns_are_those_rich_lays_out(columns: tuple[list[str], list[list[str]]]) -> None:
    header, rows = columns
    ours, theirs = io.StringIO(), io.StringIO()
    print_columns(Console(file=ours, force_terminal=False, width=10_000), header, rows)
    table = Table(box=None)
    for cell in header:
        table.add_column(Text(cell))
    for row in rows:
        table.add_row(*[Text(cell) for cell in row])
    Console(file=theirs, force_terminal=False, width=10_000).print(table)
    assert ours.getvalue() == theirs.getvalue()


def test_thousands_of_rows_are_one_line_each() -> None:
    out = io.StringIO()
    name = "a flow with a long name — and a title"
    rows = [(f"run-{n}", name, "terminated") for n in range(3000)]
    print_columns(Console(file=out, force_terminal=False, width=40), ("id", "flow", "status"), rows)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3001
    assert lines[-1] == " run-2999  a flow with a long name — and a title  terminated "
