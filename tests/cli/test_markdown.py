"""``/dump`` in ``roost chat``: the transcript as Markdown, and a place it cannot be written."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.fakes.chat_sessions import Roost, command_line, run_id_in

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def roost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Roost:
    """The command line in a fresh folder holding ask.yaml (tests/fakes/chat_sessions.py)."""
    return command_line(tmp_path, monkeypatch, capsys)


def test_dump_writes_the_transcript_as_markdown(roost: Roost, tmp_path: Path) -> None:
    chatted = roost(
        "chat", "ask.yaml", stdin="hello *you*\n/rename my `sums`\n/dump\n/dump talk.md\n"
    )
    run_id = run_id_in(chatted.out)
    assert f"wrote run {run_id} to {run_id}.md" in chatted.out
    assert f"wrote run {run_id} to talk.md" in chatted.out
    written = (tmp_path / "talk.md").read_text()
    assert written == (tmp_path / f"{run_id}.md").read_text()
    assert written.startswith("# ask — my \\`sums\\`\n\nRun `" + run_id + "` of `ask.yaml`")
    assert "**USER → bot**\n\nhello *you*\n\n**bot → USER**\n\nfour" in written
    assert "*bot waits for USER.*" in written
    assert "1 model calls, 0 prompt tokens" in written


def test_dump_refuses_a_folder_or_a_place_it_cannot_write_in_one_line(
    roost, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "folder").mkdir()
    chatted = roost("chat", "ask.yaml", stdin="/dump\nhello\n/dump folder\n/dump no/such/x.md\n")
    assert "this run has no message yet: nothing to write" in chatted.out
    assert "/dump folder: is a folder; give a file name" in chatted.out
    assert "/dump no/such/x.md: cannot write: No such file or directory" in chatted.out
    assert "Traceback" not in chatted.out + chatted.err
