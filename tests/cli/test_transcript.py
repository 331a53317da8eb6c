"""``roost show``: a run's transcript, and how to go on from it."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.commands import roost

REPO = Path(__file__).resolve().parents[2]
FLOWS = REPO / "flows"


def test_show_of_a_finished_file_suggests_forking_the_file(tmp_path: Path) -> None:
    ran = roost("run", str(FLOWS / "hello.yaml"), "--events", "hello.jsonl", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    shown = roost("show", "hello.jsonl", cwd=tmp_path)
    assert shown.stdout.splitlines()[-1] == "branch off with: roost fork hello.jsonl --at SEQ"
