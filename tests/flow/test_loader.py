"""Valid flows load into the models and keep their file, text and positions."""

from __future__ import annotations

from pathlib import Path

import roost
from roost.errors import FlowError
from roost.flow import load_flow_text, read_flow
from roost.flow.models import ScriptedProviderConfig, ToolGroup
from tests.flow.conftest import MINIMAL

DATA = Path(__file__).parent / "data"


def test_contract_example_loads_with_every_kind_of_key() -> None:
    flow = read_flow(DATA / "contract_example.yaml", environ={"OPENAI_API_KEY": "sk-abc"})
    assert flow.name == "math-team"
    assert set(flow.providers) == {"gpt", "claude", "resp", "mock"}
    assert isinstance(flow.providers["mock"], ScriptedProviderConfig)
    assert isinstance(flow.tools["math"], ToolGroup)
    assert flow.channels["team"].transitions == {
        "mathematician": ["reviewer"],
        "reviewer": ["mathematician", "USER"],
    }
    assert flow.start is not None and flow.start.from_ == "USER"
    assert flow.warnings == ()
    assert flow.path == str(DATA / "contract_example.yaml")


def test_minimal_flow_keeps_text_positions_and_no_secrets() -> None:
    flow = load_flow_text(MINIMAL, "hello.yaml", environ={})
    assert flow.text == MINIMAL
    assert flow.path == "hello.yaml"
    assert flow.secrets == frozenset()
    assert flow.locate("agents", "bot", "role") == (9, 5)
    assert flow.locate("agents", "bot", "nothing", "deeper") == (7, 3)
    assert flow.locate("providers", "mock", "replies", 0) == (4, 36)
    assert flow.locate() == (1, 1)


def test_problem_is_located_and_formatted() -> None:
    flow = load_flow_text(MINIMAL, "hello.yaml", environ={})
    problem = flow.problem(("agents", "bot", "provider"), "bad thing", "warning")
    assert str(problem) == "hello.yaml:8:5: warning: bad thing"


def test_flow_built_without_loader_locates_at_start() -> None:
    flow = roost.Flow.model_validate({"roost": 1, "name": "x"})
    assert flow.locate("agents", "a") == (1, 1)


def test_load_flow_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "hello.yaml"
    path.write_text(MINIMAL, encoding="utf-8")
    flow = roost.load_flow(path)
    assert flow.agents["bot"].provider == "mock"
    assert flow.text == MINIMAL


def test_a_flow_without_a_name_is_named_after_its_file(tmp_path: Path) -> None:
    path = tmp_path / "night-shift.yaml"
    path.write_text("roost: 1\nagents: {a: {role: r, interrupt: ALWAYS}}\n", encoding="utf-8")
    assert roost.load_flow(path).name == "night-shift"


def test_public_api_is_exported() -> None:
    assert roost.FlowError is FlowError
    assert isinstance(roost.__version__, str)
    assert callable(roost.load_flow)
