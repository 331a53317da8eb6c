"""A provider without a key in this environment: validate warns, run refuses before storing.

Each command runs in a real ``roost`` process whose environment lacks the key;
an error the run stops at is said once, not in the transcript and again at the end.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from roost.providers.keys import MissingKey, unreachable
from roost.store.sql import SqlStore
from roost.testing import flow_from_yaml
from tests.cli_process import run_cli

if TYPE_CHECKING:
    from pathlib import Path

KEYLESS = """\
roost: 1
name: keyless
providers:
  gpt: {kind: openai, model: gpt-4o-mini}
defaults: {provider: gpt}
agents:
  USER: {interrupt: NEVER, role: A person.}
  bot: {role: A bot.}
start: {from: USER, to: bot, content: Hi}
"""
ADVICE = (
    "provider 'gpt' has no API key in this environment: set OPENAI_API_KEY "
    '(or in a .env file beside the flow), or give it api_key: "${OPENAI_API_KEY}"'
)


def _without_keys() -> dict[str, str]:
    gone = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ROOST_DB")
    return {key: value for key, value in os.environ.items() if key not in gone}


def test_validate_warns_that_the_environment_lacks_the_key_and_the_file_is_ok(
    tmp_path: Path,
) -> None:
    (tmp_path / "f.yaml").write_text(KEYLESS)
    done = run_cli("validate", "f.yaml", cwd=tmp_path, env=_without_keys())
    assert (done.returncode, done.stdout) == (
        0,
        f"f.yaml:4:3: warning: {ADVICE} (a run needs it)\nf.yaml: ok\n",
    )
    keyed = run_cli(
        "validate", "f.yaml", cwd=tmp_path, env={**_without_keys(), "OPENAI_API_KEY": "k"}
    )
    assert keyed.stdout == "f.yaml: ok\n"
    (tmp_path / ".env").write_text("OPENAI_API_KEY=from-the-file\n")  # a .env file counts
    assert run_cli("validate", "f.yaml", cwd=tmp_path, env=_without_keys()).stdout == "f.yaml: ok\n"


def test_run_refuses_in_one_line_naming_the_variable_before_a_run_is_stored(
    tmp_path: Path,
) -> None:
    (tmp_path / "f.yaml").write_text(KEYLESS)
    done = run_cli("run", "f.yaml", "--db", "runs.db", cwd=tmp_path, env=_without_keys())
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"f.yaml: {ADVICE}\n")
    assert not (tmp_path / "runs.db").exists()
    batch = tmp_path / "in.jsonl"
    batch.write_text('{"message": "hi"}\n')
    done = run_cli(
        "batch", "f.yaml", "in.jsonl", "--db", "runs.db", cwd=tmp_path, env=_without_keys()
    )
    assert (done.returncode, done.stderr) == (2, f"f.yaml: {ADVICE}\n")
    assert not (tmp_path / "runs.db").exists()


@pytest.mark.parametrize(
    ("providers", "found"),
    [
        # a fallback with its key (or none needed) reaches a model
        ("gpt: {kind: openai, model: m, fallback: [local]}\n  local: {kind: scripted}", None),
        ("gpt: {kind: openai, model: m, base_url: 'http://127.0.0.1:9/v1'}", None),
        ("gpt: {kind: openai, model: m, api_key: k}", None),
        ("gpt: {kind: anthropic, model: m, fallback: [more]}\n  more: {kind: openai, model: m}",
         MissingKey("gpt", "ANTHROPIC_API_KEY")),
    ],
)  # fmt: skip
def test_a_run_is_refused_only_when_no_provider_of_a_chain_has_its_key(
    providers: str, found: MissingKey | None
) -> None:
    text = KEYLESS.replace("gpt: {kind: openai, model: gpt-4o-mini}", providers)
    assert unreachable(flow_from_yaml(text), environ={}) == found


def test_a_person_s_agent_needs_no_key_of_the_default_provider() -> None:
    text = KEYLESS.replace("bot: {role: A bot.}", "bot: {role: A bot., provider: local}")
    text = text.replace("providers:\n", "providers:\n  local: {kind: scripted}\n")
    text = text.replace("interrupt: NEVER", "interrupt: ALWAYS")
    assert unreachable(flow_from_yaml(text), environ={}) is None


def test_an_error_the_run_stops_at_is_said_once(tmp_path: Path) -> None:
    flow = KEYLESS.replace(
        "gpt: {kind: openai, model: gpt-4o-mini}",
        "gpt: {kind: scripted, replies: [{error: the model is down}]}",
    )
    (tmp_path / "f.yaml").write_text(flow)
    done = run_cli("run", "f.yaml", "--db", "runs.db", cwd=tmp_path, env=_without_keys())
    assert done.returncode == 3
    said = (done.stdout + done.stderr).splitlines()
    told = [line for line in said if "the model is down" in line]
    assert told == ["roost: error at bot: provider 'gpt': the model is down"]


def test_chat_refuses_in_one_line_naming_the_variable_before_a_run_is_stored(
    tmp_path: Path,
) -> None:
    (tmp_path / "f.yaml").write_text(KEYLESS)
    done = run_cli("chat", "f.yaml", "--db", "runs.db", cwd=tmp_path, env=_without_keys())
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"f.yaml: {ADVICE}\n")
    assert not (tmp_path / "runs.db").exists()


def test_a_flow_test_case_fails_naming_the_variable_unless_its_replies_stand_in(
    tmp_path: Path,
) -> None:
    (tmp_path / "f.yaml").write_text(KEYLESS)
    (tmp_path / "f.test.yaml").write_text(
        "flow: f.yaml\ncases:\n"
        "  - {name: keyless, expect: {status: terminated}}\n"
        "  - {name: scripted, replies: {gpt: [TERMINATE]}, expect: {status: terminated}}\n"
    )
    done = run_cli("test", "f.test.yaml", cwd=tmp_path, env=_without_keys())
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith("FAILED f.test.yaml::keyless (")
    assert lines[1].startswith("PASSED f.test.yaml::scripted (")
    assert ADVICE in lines
    assert "what happened:" not in lines  # no run was made to tell of
    titles = [run.title for run in SqlStore(str(tmp_path / ".roost" / "roost.db")).runs()]
    assert titles == ["test f.test.yaml::scripted"]  # the keyless case stored none
