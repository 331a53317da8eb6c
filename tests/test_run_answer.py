"""A run's answer: the latest message with text once a marker at its end is taken off.

One function (``roost.runstate.run_answer``, ``RunState.answer``) says it for
batch results, flow tests, ``roost show``, the Python API and the server; these
tests hold the readers that show it (its rule is held in tests/runstate/test_history.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import roost
from roost.testing import flow_from_yaml
from tests.cli_process import run_cli
from tests.runstate.conftest import FLOW

if TYPE_CHECKING:
    from pathlib import Path


def test_the_python_api_s_state_answers_what_the_bot_said_not_the_person_s_terminate() -> None:
    flow = flow_from_yaml(FLOW.format(markers="", own="", replies='["Yes, it is 4.", TERMINATE]'))
    state = roost.run_sync(flow)
    assert (state.last_message.content, state.answer) == ("TERMINATE", "Yes, it is 4.")  # type: ignore[union-attr]


def test_roost_show_prints_the_run_s_answer(tmp_path: Path) -> None:
    replies = '["Checked: it is 4. TERMINATE"]'
    (tmp_path / "f.yaml").write_text(FLOW.format(markers="", own="", replies=replies))
    done = run_cli("run", "f.yaml", "--db", "runs.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.split()[1]
    shown = run_cli("show", run_id, "--db", "runs.db", cwd=tmp_path)
    assert "answer: Checked: it is 4.\n" in shown.stdout


def test_a_flow_test_s_final_is_the_answer(tmp_path: Path) -> None:
    (tmp_path / "f.yaml").write_text(
        FLOW.format(markers="", own="", replies='["Yes, it is 4.", TERMINATE]')
    )
    (tmp_path / "f.test.yaml").write_text(
        "flow: f.yaml\ncases:\n  - name: says four\n"
        "    expect: {status: terminated, final: {equals: 'Yes, it is 4.'}}\n"
    )
    done = run_cli("test", "f.test.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
