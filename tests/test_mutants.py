"""The mutation list still fits the code, and the tool that plants it refuses a list that does not.

``bench/mutants.py`` plants each listed bug by replacing an exact text; when the
code moves, the text is no longer found and the entry must be updated. This check
makes that visible at once, rather than at the next mutation run.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _tool() -> ModuleType:
    """bench/mutants.py as a module (bench is a folder of scripts, not a package)."""
    if "mutants_tool" in sys.modules:
        return sys.modules["mutants_tool"]
    spec = importlib.util.spec_from_file_location("mutants_tool", ROOT / "bench" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_listed_mutant_can_still_be_planted() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "mutants.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


@pytest.mark.parametrize(
    ("source", "complaint"),
    [
        ("x = 1\n", "is not"),
        ("if a >= b:\n    pass\nif a >= b:\n    pass\n", "is there 2 times, not once,"),
    ],
)
def test_a_text_not_found_exactly_once_stops_the_tool(
    tmp_path: Path, source: str, complaint: str
) -> None:
    tool = _tool()
    (tmp_path / "code.py").write_text(source, encoding="utf-8")
    (tmp_path / "test_code.py").write_text("", encoding="utf-8")
    mutant = tool.Mutant("flip", "code.py", "if a >= b:", "if a > b:", ("test_code.py",))
    assert tool.check_list([mutant], tmp_path) == [
        f"flip: its text {complaint} in code.py: 'if a >= b:'"
    ]


def test_a_replacement_that_changes_only_the_layout_is_refused(tmp_path: Path) -> None:
    tool = _tool()
    (tmp_path / "code.py").write_text("y = a+1\n", encoding="utf-8")
    (tmp_path / "test_code.py").write_text("", encoding="utf-8")
    mutant = tool.Mutant("same", "code.py", "a+1", "a + 1", ("test_code.py",))
    assert tool.check_list([mutant], tmp_path) == [
        "same: the replacement changes no code, only its layout"
    ]


def test_the_planted_file_is_put_back_when_the_run_fails(tmp_path: Path) -> None:
    tool = _tool()
    (tmp_path / "code.py").write_text("ok = a >= b\n", encoding="utf-8")
    mutant = tool.Mutant("flip", "code.py", "a >= b", "a > b", ("test_code.py",))
    with pytest.raises(KeyboardInterrupt), tool.mutant_planted(tmp_path, mutant):
        assert (tmp_path / "code.py").read_text(encoding="utf-8") == "ok = a > b\n"
        raise KeyboardInterrupt
    assert (tmp_path / "code.py").read_text(encoding="utf-8") == "ok = a >= b\n"


def test_each_list_of_the_mutant_file_is_a_room_and_every_mutant_is_in_one() -> None:
    tool = _tool()
    rooms = tool.rooms()
    assert {"engine", "store", "leases", "memory", "builtin-tools", "telemetry"} <= set(rooms)
    assert tool.room_problems(tool.MUTANTS, rooms) == []
    assert sum(len(members) for members in rooms.values()) == len(tool.MUTANTS)


def test_a_mutant_outside_mutants_or_in_no_room_is_a_problem() -> None:
    tool = _tool()
    one = tool.Mutant("one", "code.py", "a", "b", ("t.py",))
    two = tool.Mutant("two", "code.py", "c", "d", ("t.py",))
    assert tool.room_problems([one], {"x": [one, two]}) == ["two: in the room x but not in MUTANTS"]
    assert tool.room_problems([one, two], {"x": [one]}) == ["two: in 0 rooms (), not one"]


def test_a_room_is_chosen_by_name_and_an_unknown_one_names_the_rooms() -> None:
    tool = _tool()
    one = tool.Mutant("one", "code.py", "a", "b", ("t.py",))
    two = tool.Mutant("two", "code.py", "c", "d", ("t.py",))
    by_room = {"first": [one], "second": [two]}
    assert tool.chosen([one, two], [], None, "second", by_room) == [two]
    with pytest.raises(tool.ListError, match="no room is called 'third'; the rooms: first, second"):
        tool.chosen([one, two], [], None, "third", by_room)
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "mutants.py"), "--room", "nowhere"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("mutants: error: no room is called 'nowhere'; the rooms: ")
    assert "leases" in done.stderr and "Traceback" not in done.stderr
