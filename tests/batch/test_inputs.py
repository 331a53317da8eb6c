"""Reading a batch's inputs: JSON Lines and CSV rows, and each bad row named by its line."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.batch.inputs import BadRow, Row, read_inputs, row_problem
from roost.errors import UsageError

if TYPE_CHECKING:
    from pathlib import Path


def rows_of(tmp_path: Path, name: str, data: bytes) -> list[Row | BadRow]:
    path = tmp_path / name
    path.write_bytes(data)
    return read_inputs(path)


def test_json_lines_rows_and_bad_rows_keep_their_line_numbers(tmp_path: Path) -> None:
    data = (
        b'{"message": "hi"}\n'
        b"\n"
        b'{"message": "x", "vars": {"topic": "owls", "n": [1, 2]}}\n'
        b'{"vars": {"topic": "cats"}}\n'
        b"not json\n"
        b"[1, 2]\n"
        b'{"mesage": "typo"}\n'
        b'{"message": 4}\n'
        b'{"message": "x", "vars": [1]}\n'
        b'{"message": "caf\xe9"}\n'
    )
    assert rows_of(tmp_path, "in.jsonl", data) == [
        Row(1, "hi", {}),
        Row(3, "x", {"topic": "owls", "n": [1, 2]}),
        Row(4, None, {"topic": "cats"}),
        BadRow(5, "not valid JSON: Expecting value (column 1)"),
        BadRow(6, 'a row is a JSON object: {"message": "...", "vars": {...}}'),
        BadRow(7, "unknown key 'mesage' (a row has message and vars)"),
        BadRow(8, "message: expected a string"),
        BadRow(9, "vars: expected an object of var names and values"),
        BadRow(10, "not valid UTF-8"),
    ]


def test_csv_rows_take_the_message_column_and_the_rest_as_vars(tmp_path: Path) -> None:
    data = (
        b"message,topic,tone\r\n"
        b"hi,owls,dry\r\n"
        b'"two\nlines",cats,\r\n'  # a quoted cell over two lines; an empty cell: not given
        b",dogs,warm\r\n"
        b"a,b,c,d\r\n"
        b",,\r\n"
        b"caf\xe9,x,y\r\n"
        b"last,x,y\r\n"
    )
    assert rows_of(tmp_path, "in.csv", data) == [
        Row(2, "hi", {"topic": "owls", "tone": "dry"}),
        Row(3, "two\nlines", {"topic": "cats"}),
        Row(5, None, {"topic": "dogs", "tone": "warm"}),
        BadRow(6, "4 cells, and the header names 3 columns"),
        BadRow(7, "an empty row"),
        BadRow(8, "not valid UTF-8"),
        Row(9, "last", {"topic": "x", "tone": "y"}),
    ]


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("in.txt", b"hi\n", "in.txt: give the inputs as a .jsonl or .csv file"),
        ("in.jsonl", b"\n\n", "in.jsonl: holds no rows"),
        ("in.csv", b"", "in.csv: holds no rows"),
        ("in.csv", b"message,a,a\nx,y,z\n", "in.csv:1: the column 'a' is named twice"),
        ("in.csv", b"message,\xff\nx,y\n", "in.csv:1: the header is not valid UTF-8"),
    ],
)
def test_a_file_that_cannot_be_read_at_all_is_bad_use(
    tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        rows_of(tmp_path, name, data)
    assert str(caught.value) == f"{tmp_path}/{message}"


def test_a_missing_file_or_a_folder_is_bad_use(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such inputs file"):
        read_inputs(tmp_path / "none.jsonl")
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(UsageError, match="is a folder"):
        read_inputs(tmp_path / "d.csv")


def test_a_row_is_checked_against_the_flow() -> None:
    declared = {"topic": "owls"}
    assert row_problem(Row(1, "hi", {"topic": "x"}), declared, has_start=False) is None
    assert row_problem(Row(1, None, {}), declared, has_start=True) is None
    assert row_problem(Row(2, "hi", {"tone": "x"}), declared, has_start=True) == (
        "unknown var 'tone' (the flow's vars: topic)"
    )
    assert row_problem(Row(3, None, {}), declared, has_start=False) == (
        "no message, and the flow has no start message"
    )
