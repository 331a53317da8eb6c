"""docs/notebook.ipynb, executed cell by cell in a real Jupyter kernel.

The kernel is ipykernel's (installed by the dev extra), started by nbclient as
Jupyter would; it imports this checkout's roost, since it inherits PYTHONPATH.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from roost.notebook import PAGE_HEIGHT
from tests.notebook.drawings import NODES, node_titles

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "notebook.ipynb"


@pytest.fixture(scope="module")
def cells(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The notebook's code cells after a run, by their tag."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    where = tmp_path_factory.mktemp("notebook")
    client = NotebookClient(
        notebook, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(where)}}
    )
    client.execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    return {cell.metadata["tags"][0]: cell for cell in code}


def _result(cell: Any) -> dict[str, str]:
    (output,) = [o for o in cell.outputs if o.output_type == "execute_result"]
    data: dict[str, str] = output.data
    return data


def _printed(cell: Any) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream")


def test_every_cell_runs_without_an_error(cells: dict[str, Any]) -> None:
    assert set(cells) == {"flow", "run", "replay", "sync"}
    errors = [o for cell in cells.values() for o in cell.outputs if o.output_type == "error"]
    assert errors == []


def test_a_cell_ending_with_a_flow_shows_its_graph(cells: dict[str, Any]) -> None:
    svg = _result(cells["flow"])["image/svg+xml"]
    assert svg.lstrip().startswith("<svg")
    assert node_titles(svg) >= NODES


def test_await_roost_run_runs_the_flow_in_a_cell(cells: dict[str, Any]) -> None:
    assert _printed(cells["run"]).splitlines() == [
        "USER -> planning: Plan a picnic for four, please.",
        "scout -> planning: A park by the river: shade, and room for a frisbee.",
        "cook -> planning: Sandwiches, fruit and lemonade; a blanket for four.",
        "USER -> planning: Perfect, thank you!",
        "terminated after 13 events",
    ]


def test_a_cell_ending_with_a_log_shows_the_replay_page(cells: dict[str, Any]) -> None:
    shown = _result(cells["replay"])
    page = shown["text/html"]
    assert page.startswith("<iframe srcdoc=") and f"height: {PAGE_HEIGHT}px" in page
    assert "Perfect, thank you!" in page
    assert node_titles(shown["image/svg+xml"]) >= NODES


def test_run_sync_in_a_cell_says_to_await_in_one_line(cells: dict[str, Any]) -> None:
    assert _printed(cells["sync"]) == (
        "roost.run_sync cannot run inside a running event loop (an async function, "
        "a notebook): use `await roost.run(...)` instead\n"
    )
