"""A flow's memory in ``roost test``: each case starts from an empty memory of its own.

A case may store and recall within its run; nothing it stores reaches the
project's store, or the next case.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from roost.flowtest.cases import run_case
from roost.flowtest.spec import load_test_file
from tests.flowtest.conftest import write_tests

if TYPE_CHECKING:
    from pathlib import Path

# The host stores what the guest says, then repeats what it is sent: the recall shows.
TEA = """\
roost: 1
name: tea
memory: {scope: guests}
providers:
  host:
    kind: scripted
    replies:
      - tool_calls:
          - name: memory__store
            arguments: {key: tea, content: The guest drinks green tea.}
      - Noted.
agents:
  guest: {interrupt: ALWAYS}
  host: {provider: host, functions: [memory#store]}
start: {from: guest, to: host, content: "I only drink green tea."}
"""

TELLS_THEN_ASKS = """\
name: remembers within its run
answers: ["Which tea should I make?"]
replies:
  host:
    - tool_calls:
        - {name: memory__store, arguments: {key: tea, content: The guest drinks green tea.}}
    - Noted.
    - {echo: last}
expect:
  final: {contains: "- tea: The guest drinks green tea."}
"""

ONLY_ASKS = """\
name: starts from an empty memory
message: Which tea should I make?
replies:
  host: [{echo: last}]
expect:
  final: {equals: Which tea should I make?}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with a ``.roost`` store folder, the current folder, holding tea.yaml."""
    monkeypatch.delenv("ROOST_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".roost").mkdir()
    (tmp_path / "tea.yaml").write_text(TEA)
    return tmp_path


def test_each_case_has_a_memory_of_its_own_and_the_projects_is_untouched(
    project: Path,
) -> None:
    loaded = load_test_file(
        write_tests(project, TELLS_THEN_ASKS, ONLY_ASKS, name="tea.test.yaml", flow="tea.yaml")
    )
    remembers, starts_empty = (asyncio.run(run_case(loaded, case)) for case in loaded.cases)
    assert remembers.failures == [], remembers.details
    assert starts_empty.failures == [], starts_empty.details
    assert not (project / ".roost" / "roost.db").exists()
