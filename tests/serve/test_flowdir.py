"""The flows folder of a server: what it tells of a flow's problems."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.serve.flowdir import FlowDir

if TYPE_CHECKING:
    from pathlib import Path

BROKEN = "roost: 1\nname: broken\nagents:\n  bot: {role: Hi, provider: nowhere}\n"


def test_problems_name_the_flow_by_its_place_in_the_folder_not_on_the_disk(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "kept" / "flows"
    (folder / "team").mkdir(parents=True)
    (folder / "team" / "broken.yaml").write_text(BROKEN)
    flows = FlowDir(folder)  # an absolute folder, as an operator may give it
    (entry,) = flows.entries()
    assert entry.problems and all(p.startswith("team/broken.yaml:") for p in entry.problems)
    checked = [str(problem) for problem in flows.check("team/broken.yaml")]
    assert checked and all(p.startswith("team/broken.yaml:4:") for p in checked)
    assert not any(str(tmp_path) in p for p in [*entry.problems, *checked])
