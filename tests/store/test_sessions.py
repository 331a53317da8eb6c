"""A session's runs deleted from the store: a run goes only with the forks that branch off it.

The sessions as people use them (``roost chat``, ``roost runs --prune``) are tested in tests/cli.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.store.sql import SqlStore
from tests.store.conftest import run_events

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    url: str = request.getfixturevalue("pg_url")
    return url


def test_the_store_refuses_to_delete_a_parent_without_its_fork(db: str) -> None:
    store = SqlStore(db)
    store.new_log("parent").append(run_events("parent", 4))
    fork = store.fork("parent", 2, "child")
    fork.materialize()
    with pytest.raises(Exception, match="run child branches off run parent"):
        store.delete(["parent"])
    assert [event.seq for event in store.log("child").load()] == [0, 1]
    assert store.delete(["parent", "child"]) == 4
    assert store.runs() == []
    store.close()
