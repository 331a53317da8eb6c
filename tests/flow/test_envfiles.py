"""``.env`` files beside the flow and in the current folder, read for ``${NAME}``."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import pytest

from roost.errors import FlowError
from roost.flow import check_flow_file, load_flow_text, read_flow
from roost.flow.envfiles import env_files
from roost.flow.models import OpenAIProviderConfig
from roost.providers._common import settings_from
from roost.providers.base import ProviderContext

if TYPE_CHECKING:
    from pathlib import Path

SECRET = "sk-dotenv-5f1e2d3c4b5a"

# Every variable is public so that vars can show which value won; one is not.
FLOW = """\
roost: 1
name: envfiles
public_env: [WHO_CWD, WHO_BOTH, WHO_ALL, ONLY_CWD, ONLY_FLOW, QUOTED, SPLICED]
vars:
  both: "${WHO_BOTH}"
  all: "${WHO_ALL}"
  cwd: "${ONLY_CWD}"
  flow: "${ONLY_FLOW}"
  quoted: "${QUOTED}"
  spliced: "${SPLICED}"
providers:
  gpt: {kind: openai, model: gpt-4o-mini, api_key: "${TOKEN}", base_url: "http://127.0.0.1:9/v1"}
agents:
  bot: {provider: gpt, role: "You help."}
"""


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder (with a .env) holding ``flows/`` (the flow and its own .env)."""
    monkeypatch.chdir(tmp_path)
    for name in ("WHO_BOTH", "WHO_ALL", "ONLY_CWD", "ONLY_FLOW", "QUOTED", "SPLICED", "TOKEN"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".env").write_text("WHO_BOTH=cwd\nWHO_ALL=cwd\nONLY_CWD=from the current folder\n")
    flows = tmp_path / "flows"
    flows.mkdir()
    (flows / ".env").write_text(
        textwrap.dedent(
            f"""\
            # the flow's own settings
            export WHO_BOTH=flow
            WHO_ALL=flow
            ONLY_FLOW=from the flow's folder
            QUOTED="two words # not a comment"
            SPLICED=${{ONLY_FLOW}}, spliced
            TOKEN='{SECRET}'
            """
        )
    )
    (flows / "envfiles.yaml").write_text(FLOW)
    return flows


def test_the_flow_folder_wins_over_the_current_one_and_the_environment_over_both(
    folders: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WHO_ALL", "environment")
    flow = read_flow(folders / "envfiles.yaml")
    assert flow.vars == {
        "both": "flow",
        "all": "environment",
        "cwd": "from the current folder",
        "flow": "from the flow's folder",
        "quoted": "two words # not a comment",
        "spliced": "from the flow's folder, spliced",
    }
    assert flow.providers["gpt"].api_key == SECRET


def test_a_value_from_a_env_file_is_a_secret_like_any_other(folders: Path) -> None:
    flow = read_flow(folders / "envfiles.yaml")
    assert SECRET in flow.secrets
    assert "from the flow's folder" not in flow.secrets  # listed in public_env
    assert SECRET not in flow.text


def test_an_empty_environment_variable_still_wins(
    folders: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ONLY_FLOW", "")
    with pytest.raises(FlowError, match="environment variable 'ONLY_FLOW' is not set"):
        read_flow(folders / "envfiles.yaml")


def test_a_given_environment_is_taken_as_it_is(folders: Path) -> None:
    """An embedder (or a test) passing ``environ`` gets exactly it: no .env is read."""
    with pytest.raises(FlowError) as caught:
        read_flow(folders / "envfiles.yaml", environ={})
    assert "environment variable 'ONLY_CWD' is not set" in str(caught.value)


def test_a_flow_in_the_current_folder_reads_its_env_once(
    folders: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert env_files(str(folders / "envfiles.yaml")) == [".env", str(folders / ".env")]
    monkeypatch.chdir(folders)
    assert env_files("envfiles.yaml") == [".env"]
    assert env_files(str(folders / "envfiles.yaml")) == [".env"]


def test_a_line_that_does_not_parse_is_one_located_problem_that_hides_the_line(
    folders: Path,
) -> None:
    (folders / ".env").write_text(f"A=1\nB='{SECRET}\nC=3\nnot a variable\n")
    checked = check_flow_file(folders / "envfiles.yaml")
    assert checked.flow is None
    shown = [str(p) for p in checked.problems]
    assert shown == [
        f"{folders / '.env'}:2:1: error: this line is not NAME=value (a quote left open, "
        "or text that is neither a variable nor a # comment)",
        f"{folders / '.env'}:4:1: error: this line is not NAME=value (a quote left open, "
        "or text that is neither a variable nor a # comment)",
    ]
    assert all(SECRET not in line for line in shown)


def test_a_env_file_that_is_not_text_is_located(folders: Path) -> None:
    (folders / ".env").write_bytes(b"A=1\nB=\xff\xfe\n")
    checked = check_flow_file(folders / "envfiles.yaml")
    assert [str(p) for p in checked.problems] == [
        f"{folders / '.env'}:2:1: error: the file is not UTF-8 text"
    ]


def test_a_flow_given_as_text_reads_the_env_of_its_path(folders: Path) -> None:
    path = folders / "envfiles.yaml"
    flow = load_flow_text(path.read_text(), str(path))
    assert flow.vars["both"] == "flow"


# ----------------------------------------------------------------------------- vendor keys


def openai_entry(base_url: str | None = None) -> OpenAIProviderConfig:
    return OpenAIProviderConfig.model_validate(
        {"kind": "openai", "model": "m", "base_url": base_url}
    )


def test_a_vendor_key_may_come_from_a_env_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    context = ProviderContext(env_files={"OPENAI_API_KEY": SECRET})
    settings = settings_from("gpt", openai_entry(), context, key_env="OPENAI_API_KEY")
    assert settings.api_key == SECRET and SECRET in settings.secrets
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    settings = settings_from("gpt", openai_entry(), context, key_env="OPENAI_API_KEY")
    assert settings.api_key == "sk-from-the-environment"
    # Pointed at another server, the vendor's key is not sent there, wherever it is kept.
    other = settings_from("gpt", openai_entry("http://x/v1"), context, key_env="OPENAI_API_KEY")
    assert other.api_key != SECRET


def test_the_flow_carries_its_env_file_values_to_the_providers(folders: Path) -> None:
    flow = read_flow(folders / "envfiles.yaml")
    assert flow.env_files["TOKEN"] == SECRET
    assert flow.env_files["WHO_BOTH"] == "flow"
