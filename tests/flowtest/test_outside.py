"""Model calls a case makes outside its flow: through the test file's own providers, recorded
and masked, a failing one failing the case in one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.store.sql import SqlStore
from tests.flowtest.conftest import cases, results
from tests.flowtest.support import ANGRY, with_actor

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_a_simulated_person_whose_provider_fails_fails_the_case_in_one_line(
    support: Path,
) -> None:
    broken = ANGRY.replace(
        "actor: [This is taking forever!, {echo: last}]", "actor: [{error: down}]"
    )
    [result] = results(with_actor(cases(support, broken)))
    assert result.failures == ["user: provider 'actor': down"]


SECRET = "sk-roost-test-4d1e9"


def test_a_test_files_own_provider_reads_the_environment_and_masks_what_it_read(
    support: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROOST_TEST_ACTOR_TOKEN", SECRET)
    path = cases(support, ANGRY.replace("  actor: [This is taking forever!, {echo: last}]\n", ""))
    refused = '[{error: "refused ${ROOST_TEST_ACTOR_TOKEN}"}]'
    own = f"providers:\n  actor: {{kind: scripted, replies: {refused}}}\n"
    path.write_text(path.read_text().replace("cases:\n", own + "cases:\n", 1))
    store = SqlStore(str(tmp_path / "runs.db"))
    [result] = results(path, store)
    assert result.failures == ["user: provider 'actor': refused ***"]
    [call] = [e for e in store.log(result.attempts[0].run_id).load() if e.type == "llm_call"
              and e.purpose == "simulated_person"]  # fmt: skip
    assert call.error == "provider 'actor': refused ***"
    store.close()
