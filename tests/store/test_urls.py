"""Where runs are: the nearest .roost folder from the current one up, as git finds .git."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from roost.cli import main

if TYPE_CHECKING:
    from pathlib import Path

FLOW = """\
roost: 1
name: where
providers:
  p: {kind: scripted, replies: [hi, TERMINATE]}
agents:
  USER: {role: u, interrupt: ALWAYS}
  bot: {role: b, provider: p}
start: {from: USER, to: bot, content: hello}
"""

Roost = Callable[..., tuple[int, str, str]]


@pytest.fixture
def roost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Roost:
    """``roost ARGS`` run in folder ``cwd``: (exit code, stdout, stderr)."""
    monkeypatch.delenv("ROOST_DB", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "flow.yaml").write_text(FLOW)

    def invoke(cwd: Path, *args: str) -> tuple[int, str, str]:
        monkeypatch.chdir(cwd)
        monkeypatch.setattr("sys.stdin", io.StringIO(""))
        code = 0
        try:
            main(list(args))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return invoke


def _started(roost: Roost, cwd: Path, flow: Path, *options: str) -> str:
    code, out, err = roost(cwd, "run", str(flow), "--no-input", *options)
    assert code == 0, err
    return out.split()[1]


def test_a_run_started_in_a_subfolder_is_kept_with_the_project(
    roost: Roost, tmp_path: Path
) -> None:
    first = _started(roost, tmp_path, tmp_path / "flow.yaml")  # makes tmp_path/.roost
    deep = tmp_path / "src" / "deep"
    deep.mkdir(parents=True)
    second = _started(roost, deep, tmp_path / "flow.yaml")
    assert not (deep / ".roost").exists() and not (tmp_path / "src" / ".roost").exists()
    code, out, err = roost(deep, "runs")
    assert code == 0 and first in out and second in out
    assert err == f"store: {tmp_path / '.roost' / 'roost.db'}\n"
    assert roost(tmp_path, "runs")[2] == "store: .roost/roost.db\n"
    assert "bot → USER: hi" in roost(deep, "show", first)[1]


def test_without_a_roost_folder_above_the_store_is_made_here(roost: Roost, tmp_path: Path) -> None:
    here = tmp_path / "project"
    here.mkdir()
    code, out, err = roost(here, "runs")
    assert (code, out) == (0, "no runs stored\n")
    assert err == "store: .roost/roost.db (not made yet: the first run makes it)\n"
    assert not (here / ".roost").exists()
    _started(roost, here, tmp_path / "flow.yaml")
    assert (here / ".roost" / "roost.db").is_file() and not (tmp_path / ".roost").exists()


def test_the_nearest_roost_folder_wins(roost: Roost, tmp_path: Path) -> None:
    outer = _started(roost, tmp_path, tmp_path / "flow.yaml")
    inner_folder = tmp_path / "inner"
    (inner_folder / ".roost").mkdir(parents=True)
    inner = _started(roost, inner_folder, tmp_path / "flow.yaml")
    listed = roost(inner_folder, "runs")[1]
    assert inner in listed and outer not in listed


def test_db_and_roost_db_still_win_from_a_subfolder(
    roost: Roost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _started(roost, tmp_path, tmp_path / "flow.yaml")
    sub = tmp_path / "sub"
    sub.mkdir()
    chosen = _started(roost, sub, tmp_path / "flow.yaml")
    assert chosen not in roost(sub, "runs", "--db", "mine.db")[1]
    mine = _started(roost, sub, tmp_path / "flow.yaml", "--db", "mine.db")
    assert (sub / "mine.db").is_file() and mine not in roost(sub, "runs")[1]
    monkeypatch.setenv("ROOST_DB", str(tmp_path / "env.db"))
    from_env = _started(roost, sub, tmp_path / "flow.yaml")
    code, out, err = roost(sub, "runs")
    assert code == 0
    assert from_env in out and chosen not in out
    assert err == f"store: {tmp_path / 'env.db'}\n"
