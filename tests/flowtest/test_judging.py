"""A case's judges: a model grades the transcript against a rubric, its verdict checked."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from roost.api import replay
from roost.store.sql import SqlStore
from tests.flowtest.conftest import cases, results
from tests.flowtest.support import JUDGED

if TYPE_CHECKING:
    from pathlib import Path


GRADER = "providers:\n  grader: {kind: scripted, replies: [%s]}\n"


def judged_file(folder: Path, *verdicts: str, case: str = JUDGED) -> Path:
    path = cases(folder, case)
    replies = ", ".join(f"'{v}'" for v in verdicts)
    path.write_text(path.read_text().replace("cases:\n", GRADER % replies + "cases:\n", 1))
    return path


def test_a_judge_that_passes_passes_and_its_call_is_recorded_and_replays(
    support: Path, tmp_path: Path
) -> None:
    store = SqlStore(str(tmp_path / "runs.db"))
    [result] = results(
        judged_file(support, '{"pass": true, "reason": "It names the order."}'), store
    )
    assert result.failures == []
    assert result.notes == ["judge (grader): pass: It names the order."]
    log = store.log(result.attempts[0].run_id)
    [call] = [e for e in log.load() if e.type == "llm_call" and e.purpose == "judge"]
    assert (call.provider, call.node, call.response.text) == (
        "grader", "judge", '{"pass": true, "reason": "It names the order."}'
    )  # fmt: skip
    assert asyncio.run(replay(log)).identical
    store.close()


def test_a_judge_that_fails_says_why_and_a_reply_that_is_no_verdict_fails(support: Path) -> None:
    [failed] = results(judged_file(support, '{"pass": false, "reason": "No order named."}'))
    assert failed.failures == ["judge (grader): fail: No order named."]
    assert "support -> customer: Your order 42 is on its way." in failed.details
    [garbled] = results(judged_file(support, '{"pass": "yes"}'))
    assert garbled.failures == [
        "judge (grader): fail: its reply is not a verdict ('reason' is a required property): "
        '\'{"pass": "yes"}\''
    ]


def test_every_judge_of_a_list_must_pass(support: Path) -> None:
    two = JUDGED.replace(
        'judge: {rubric: "Says where the order is.", provider: grader}',
        "judge:\n    - {rubric: Polite., provider: grader}"
        "\n    - {rubric: Short., provider: grader}",
    )
    [result] = results(
        judged_file(
            support, '{"pass": true, "reason": "ok"}', '{"pass": false, "reason": "too long"}',
            case=two,
        )
    )  # fmt: skip
    assert result.failures == ["judge (grader): fail: too long"]
