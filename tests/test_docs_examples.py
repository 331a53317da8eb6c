"""The docs' examples run as written: marked flows to their documented end, Python as scripts.

How a block is marked is said in tests/docs_blocks.py. Every YAML block that is a
whole flow is marked, runnable or not (with the reason), and validates either way.
"""

from __future__ import annotations

import re
import runpy
import shutil
from typing import TYPE_CHECKING

import pytest
import yaml

import roost
from roost.engine import Runner
from roost.flow import load_flow_text
from roost.ports import MemoryLog
from tests.docs_blocks import DOC_FILES, ROOT, Block, all_blocks, output_of, page, write_files

if TYPE_CHECKING:
    from pathlib import Path

BLOCKS = all_blocks()


def _is_whole_flow(block: Block) -> bool:
    if block.lang != "yaml":
        return False
    try:
        data = yaml.safe_load(block.text)
    except yaml.YAMLError:
        return False  # a fragment with an ellipsis, say: not a flow
    return isinstance(data, dict) and "roost" in data


WHOLE_FLOWS = [block for block in BLOCKS if _is_whole_flow(block)]
RUNNABLE_FLOWS = [block for block in WHOLE_FLOWS if block.marker == "runnable"]
RUNNABLE_PYTHON = [b for b in BLOCKS if b.lang == "python" and b.marker == "runnable"]


def _ids(blocks: list[Block]) -> list[str]:
    return [block.where for block in blocks]


def test_every_marker_is_read_as_one() -> None:
    # A misspelt marker would silently run nothing: each comment naming one must parse.
    written = sum(len(re.findall(r"<!--[^>]*runnable", path.read_text())) for path in DOC_FILES)
    read = sum(1 for block in BLOCKS if block.marker in ("runnable", "not runnable"))
    assert written == read
    assert RUNNABLE_FLOWS and RUNNABLE_PYTHON


def test_every_whole_flow_says_whether_it_runs() -> None:
    unmarked = [b.where for b in WHOLE_FLOWS if b.marker not in ("runnable", "not runnable")]
    assert unmarked == [], "mark each with <!-- runnable --> or <!-- not runnable: WHY -->"
    silent = [b.where for b in WHOLE_FLOWS if b.marker == "not runnable" and not b.settings]
    assert silent == [], "a flow that is not runnable says why"


def test_every_python_example_of_the_api_page_runs() -> None:
    unmarked = [b.where for b in page("api.md") if b.lang == "python" and b.marker != "runnable"]
    assert unmarked == []


@pytest.mark.parametrize("block", WHOLE_FLOWS, ids=_ids(WHOLE_FLOWS))
def test_each_whole_flow_validates(block: Block, tmp_path: Path) -> None:
    # A flow that needs a key is validated with a stand-in for it, never the real one.
    environ = {name: "doc-value" for name in re.findall(r"\$\{(\w+)", block.text)}
    path = tmp_path / block.setting("file", "flow.yaml")
    flow = load_flow_text(block.text, str(path), environ=environ)
    assert flow.warnings == ()


@pytest.mark.parametrize("block", RUNNABLE_FLOWS, ids=_ids(RUNNABLE_FLOWS))
async def test_each_runnable_flow_runs_to_its_documented_end(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_files([b for b in BLOCKS if b.path == block.path], tmp_path)  # its skills, say
    for other in RUNNABLE_FLOWS:  # the flows a page names by file sit beside it (sub-flows)
        if other.path == block.path and other.setting("file", ""):
            (tmp_path / other.setting("file", "")).write_text(other.text, encoding="utf-8")
    path = tmp_path / block.setting("file", "flow.yaml")
    path.write_text(block.text, encoding="utf-8")
    runner = Runner(flow=roost.load_flow(path), log=MemoryLog("doc-example"))
    state = await runner.start()
    for answer in block.all_of("answer"):
        assert state.status == "paused", f"{block.where}: no interrupt left for {answer!r}"
        state = await runner.continue_(answer)
    assert state.status == block.setting("ends", "terminated"), block.where


@pytest.mark.parametrize("block", RUNNABLE_PYTHON, ids=_ids(RUNNABLE_PYTHON))
def test_each_runnable_python_example_prints_what_the_page_shows(
    block: Block,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Run from a fresh copy of the repository's example flows, as a clone would have them.
    shutil.copytree(ROOT / "flows", tmp_path / "flows")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROOST_DB", raising=False)
    script = tmp_path / "example.py"
    script.write_text(block.text, encoding="utf-8")
    runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out
    expected = output_of(block, [b for b in BLOCKS if b.path == block.path])
    if expected is not None:
        assert printed == expected, block.where
