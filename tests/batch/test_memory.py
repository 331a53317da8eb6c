"""``roost batch`` rows remember: each row is a run that may store and recall in the store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.events import MemoryEntry, MessageEvent
from roost.store.memory import SqlMemory
from roost.store.sql import SqlStore
from tests.batch.conftest import Roost, jsonl, results

if TYPE_CHECKING:
    from pathlib import Path

# Each row's host stores what the guest drinks.
TELL = """\
roost: 1
name: tell
memory: {scope: guests}
providers:
  script:
    kind: scripted
    replies:
      - tool_calls:
          - name: memory__store
            arguments: {key: tea, content: The guest drinks green tea., importance: 0.9}
      - Noted. TERMINATE
agents:
  guest: {provider: script}
  host: {provider: script, functions: [memory#store]}
start: {from: guest, to: host, content: "I only drink green tea."}
"""

# Its model repeats what it is sent, then the guest ends the run: the reply shows the recall.
ASK = """\
roost: 1
name: ask
memory: {scope: guests}
providers:
  script: {kind: scripted, replies: [{echo: last}, TERMINATE]}
agents:
  guest: {provider: script}
  host: {provider: script}
start: {from: guest, to: host, content: "Which tea should I make?"}
"""

RECALLED = "- tea: The guest drinks green tea."


def host_said(store: SqlStore, run: str) -> list[str]:
    """What the host of ``run`` said: its one echo shows what it was sent."""
    events = store.log(run).load()
    return [e.content for e in events if isinstance(e, MessageEvent) and e.from_ == "host"]


def test_a_row_of_one_batch_recalls_what_a_row_of_another_stored(
    folder: Path, roost: Roost
) -> None:
    (folder / "tell.yaml").write_text(TELL)
    (folder / "ask.yaml").write_text(ASK)
    jsonl(folder / "tell.jsonl", {"message": "I only drink green tea."})
    code, out, err = roost("batch", "tell.yaml", "tell.jsonl", "--batch", "told")
    assert code == 0, out + err
    [told] = results(folder / "tell.jsonl.results.jsonl")
    assert (told["status"], told["final"]) == ("terminated", "Noted.")
    store = SqlStore(str(folder / ".roost" / "roost.db"))
    tea = MemoryEntry(key="tea", content="The guest drinks green tea.", importance=0.9)
    assert SqlMemory(store).entries("shared:guests") == [tea]

    jsonl(folder / "ask.jsonl", {"message": "Which tea?"}, {"message": "And for the tea?"})
    code, out, err = roost("batch", "ask.yaml", "ask.jsonl", "--batch", "asked")
    assert code == 0, out + err
    rows = results(folder / "ask.jsonl.results.jsonl")
    assert [r["status"] for r in rows] == ["terminated", "terminated"]
    for row in rows:
        [echoed] = host_said(store, row["run"])
        assert RECALLED in echoed
