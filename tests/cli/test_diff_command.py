"""``roost diff``: where two runs part, what each did from there, and the exit status."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.cli_inprocess import run_cli

if TYPE_CHECKING:
    from pathlib import Path

DESK = """\
roost: 1
name: desk
defaults: {provider: desk}
providers:
  desk: {kind: scripted, replies: ["Hello", "Refund done."], when_exhausted: repeat_last}
agents:
  support: {role: You help.}
  customer: {interrupt: ALWAYS, role: The customer.}
start: {from: customer, to: support, content: "Where is my order?"}
"""


def newest(folder: Path) -> str:
    listed = run_cli("runs", cwd=folder).stdout.splitlines()
    return listed[1].split()[0]


def test_two_forks_part_where_their_answers_do_and_show_each_side(tmp_path: Path) -> None:
    (tmp_path / "desk.yaml").write_text(DESK)
    run_cli("run", "desk.yaml", "--answer", "I want a refund", "--no-input", cwd=tmp_path)
    first = newest(tmp_path)
    run_cli("fork", first, "--at", "5", "--answer", "Never mind", "--no-input", cwd=tmp_path)
    fork = newest(tmp_path)
    done = run_cli("diff", first, fork, cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["they share 5 events (0 to 4)", "they part at event 5"]
    parted = next(line for line in lines if line.startswith("│ 5 "))
    assert "answered: 'I want a refund'" in parted
    assert "answered: 'Never mind'" in parted
    assert any("model calls" in line and "│ 2" in line for line in lines)
    assert done.stderr.strip().endswith("the runs part at event 5")


def test_a_run_and_itself_are_the_same_exit_0_and_bad_use_is_2(tmp_path: Path) -> None:
    (tmp_path / "desk.yaml").write_text(DESK)
    run_cli("run", "desk.yaml", "--no-input", cwd=tmp_path)
    first = newest(tmp_path)
    same = run_cli("diff", first, first, cwd=tmp_path)
    assert (same.returncode, same.stdout) == (0, "same: 5 events\n")
    run_cli("fork", first, "--at", "5", "--answer", "More", "--no-input", cwd=tmp_path)
    longer = run_cli("diff", first, newest(tmp_path), cwd=tmp_path)
    assert longer.returncode == 4
    assert "they share 5 events (0 to 4)" in longer.stdout
    bad = run_cli("diff", first, cwd=tmp_path)
    assert bad.returncode == 2
    assert "give RUN_A and RUN_B, or RUN_A and --flow FILE" in bad.stderr


def test_a_run_against_its_replay_under_an_edited_flow(tmp_path: Path) -> None:
    (tmp_path / "desk.yaml").write_text(DESK)
    run_cli("run", "desk.yaml", "--no-input", cwd=tmp_path)
    first = newest(tmp_path)
    (tmp_path / "edited.yaml").write_text(DESK.replace("You help.", "You help kindly."))
    done = run_cli("diff", first, "--flow", "edited.yaml", cwd=tmp_path)
    assert done.returncode == 4
    assert "they part at event 2" in done.stdout
    assert "replay under edited.yaml" in done.stdout


def test_a_replay_whose_routes_decide_otherwise_names_the_route_each_took(
    tmp_path: Path,
) -> None:
    from pathlib import Path as FilePath

    example = FilePath(__file__).resolve().parents[2] / "flows" / "review_loop.yaml"
    text = example.read_text()
    (tmp_path / "review.yaml").write_text(text)
    # The edit sends a draft the critic wants revised on to the editor.
    revise = "\n          when: {field: verdict, equals: revise}"
    swapped = text.replace("- to: writer" + revise, "- to: editor" + revise)
    assert swapped != text
    (tmp_path / "swapped.yaml").write_text(swapped)
    run_cli("run", "review.yaml", "--answer", "Signed off.", "--no-input", cwd=tmp_path)
    wide = {"COLUMNS": "240"}  # a row a line: the cells are not wrapped
    done = run_cli("diff", newest(tmp_path), "--flow", "swapped.yaml", cwd=tmp_path, env=wide)
    assert done.returncode == 4, done.stderr
    lines = done.stdout.splitlines()
    assert (
        "routes from there: critic→writer (verdict = revise) | critic→editor (verdict = revise)"
        in lines
    )
    [parted] = [line for line in lines if line.startswith("│ 8 ")]
    assert "review chose writer (only_candidate), route critic→writer: verdict = revise" in parted
    assert "review chose editor (only_candidate), route critic→editor: verdict = revise" in parted
