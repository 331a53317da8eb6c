"""``roost batch`` rows remember: each row is a run that may store and recall in the store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.events import MemoryEntry
from roost.store.memory import SqlMemory
from roost.store.sql import SqlStore
from tests.batch.conftest import ASK, RECALLED, TELL, Roost, host_said, jsonl, results

if TYPE_CHECKING:
    from pathlib import Path


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
