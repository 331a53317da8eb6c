"""Valid flows load into the models, keep their positions and text, and report warnings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import roost
from roost.errors import FlowError
from roost.flow import load_flow_text, read_flow, yamlread
from roost.flow.models import McpTool, PythonTool, ScriptedProviderConfig, ToolGroup
from tests.flow.conftest import load, problems

DATA = Path(__file__).parent / "data"

MINIMAL = """\
roost: 1
name: hello
providers:
  mock: {kind: scripted, replies: [Hi]}
agents:
  USER: {interrupt: ALWAYS}
  bot:
    provider: mock
    role: You greet people.
start: {from: USER, to: bot, content: hello}
"""


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


def test_utf8_bom_and_non_ascii_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + MINIMAL.replace("hello", "caf\u00e9 \u2615").encode())
    assert read_flow(path).name == "caf\u00e9 \u2615"


def test_public_api_is_exported() -> None:
    assert roost.FlowError is FlowError
    assert isinstance(roost.__version__, str)
    assert callable(roost.load_flow)


def test_merge_keys_share_settings_and_explicit_keys_win() -> None:
    flow = load(
        """\
        roost: 1
        name: merge
        providers:
          base: &base {kind: openai, model: gpt-4o-mini, temperature: 0.2}
          warm:
            <<: *base
            temperature: 1.0
        """
    )
    warm = flow.providers["warm"]
    assert warm.model == "gpt-4o-mini"
    assert warm.temperature == 1.0
    assert flow.locate("providers", "warm", "model") == (4, 30)


def test_yaml_keys_are_text_and_timestamps_stay_text() -> None:
    flow = load(
        """\
        roost: 1
        name: 2024-01-01
        vars: {1: one, yes: true}
        """
    )
    assert flow.name == "2024-01-01"
    assert flow.vars == {"1": "one", "yes": True}


def test_mcp_and_group_references_resolve() -> None:
    flow = load(
        """\
        roost: 1
        name: tools
        defaults: {provider: p}
        providers: {p: {kind: scripted}}
        mcp_servers:
          files: {command: mcp-files, args: [--root, .]}
          web: {url: "http://127.0.0.1:9/mcp"}
        tools:
          fs: {mcp: files}
          remote: {mcp: web}
          math: {tools: {add: {python: "m:add"}}}
        agents:
          a: {functions: [fs, "fs#read", "@@remote", "@@math", "math#add", "remote#get"]}
        """
    )
    assert isinstance(flow.tools["fs"], McpTool)
    assert isinstance(flow.tools["math"], ToolGroup)
    assert isinstance(flow.tools["math"].tools["add"], PythonTool)


def test_a_server_is_referenced_as_server_hash_tool() -> None:
    # Section 1: the tools of a server under mcp_servers are referenced as SERVER#tool.
    text = """\
        roost: 1
        name: tools
        defaults: {provider: p}
        providers: {p: {kind: scripted}}
        mcp_servers: {files: {command: x}}
        agents:
          a: {functions: ["files#read", "files#"]}
        """
    assert problems(text) == ["flow.yaml:7:33: error: 'files#' names no tool: write files#TOOL"]


def test_every_problem_is_reported_not_just_the_first() -> None:
    lines = problems(
        """\
        roost: 1
        name: many
        agents:
          a: {provider: nope}
          b: {provider: neither}
        channels:
          c: {members: [a, b, ghost]}
        """
    )
    assert len(lines) == 4  # two providers, one member, one llm director without provider
    assert lines == sorted(lines, key=lambda s: tuple(int(n) for n in s.split(":")[1:3]))


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        (
            """\
            roost: 1
            name: w
            defaults: {provider: p}
            providers: {p: {kind: scripted}}
            agents: {a: {}}
            channels:
              solo: {members: [a], director: {strategy: round_robin}}
            """,
            "flow.yaml:7:3: warning: channel 'solo' has fewer than two members",
        ),
        (
            """\
            roost: 1
            name: w
            defaults: {provider: p}
            providers: {p: {kind: scripted}}
            agents: {a: {}, b: {}, stray: {}}
            start: {from: a, to: b}
            """,
            "flow.yaml:5:24: warning: agent 'stray' is unreachable: "
            "no route from the start message reaches it",
        ),
        (
            """\
            roost: 1
            name: w
            defaults: {provider: p, max_rounds: 5000}
            providers: {p: {kind: scripted}}
            agents: {a: {}, b: {}}
            start: {from: a, to: b}
            """,
            "flow.yaml:6:1: warning: agents 'a', 'b' never interrupt and no round cap "
            "below 1000 stops them; lower max_rounds",
        ),
        (
            """\
            roost: 1
            name: w
            defaults: {provider: p, max_rounds: 600}
            providers: {p: {kind: scripted}}
            agents: {a: {}, b: {}, USER: {interrupt: ALWAYS}}
            channels:
              c:
                members: [a, b]
                max_rounds: 2000
            start: {from: USER, to: c}
            """,
            "flow.yaml:9:5: warning: agents 'a', 'b' never interrupt and no round cap "
            "below 1000 stops them; lower max_rounds",
        ),
    ],
)
def test_warnings_do_not_stop_a_flow(text: str, warning: str) -> None:
    flow = load(text)
    assert [str(w) for w in flow.warnings] == [warning]


def test_a_person_in_the_loop_silences_the_endless_loop_warning() -> None:
    flow = load(
        """\
        roost: 1
        name: w
        defaults: {provider: p, max_rounds: 5000}
        providers: {p: {kind: scripted}}
        agents: {a: {}, USER: {interrupt: ALWAYS}}
        start: {from: USER, to: a}
        """
    )
    assert flow.warnings == ()


def test_warnings_ride_along_with_errors() -> None:
    lines = problems(
        """\
        roost: 1
        name: w
        defaults: {provider: p}
        providers: {p: {kind: scripted}}
        agents: {a: {provider: q}}
        channels:
          solo: {members: [a]}
        """
    )
    assert lines == [
        "flow.yaml:5:24: error: no provider named 'q' under providers",
        "flow.yaml:7:3: warning: channel 'solo' has fewer than two members",
    ]


def test_size_limit_is_enforced(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(MINIMAL + "#" * (1 << 20), encoding="utf-8")
    with pytest.raises(FlowError, match="larger than"):
        read_flow(path)


def test_a_billion_laughs_fails_before_anything_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    built = [0]
    build_value = yamlread._Builder.value

    def counting(self: Any, node: Any, path: Any, depth: int) -> Any:
        built[0] += 1
        return build_value(self, node, path, depth)

    monkeypatch.setattr(yamlread._Builder, "value", counting)
    lines = ["roost: 1", "name: lol", "vars:", "  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 30):
        lines.append(f"  l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 8) + "]")
    with pytest.raises(FlowError, match="more than 50000 values after expanding aliases"):
        load_flow_text("\n".join(lines) + "\n", "lol.yaml", environ={})
    # Refused from the document's shape alone: not one value was built.
    assert built == [0]


def test_a_long_chain_of_aliases_is_refused_not_a_recursion_error() -> None:
    lines = ["roost: 1", "name: chain", "vars:", "  a0: &a0 x"]
    lines += [f"  a{i}: &a{i} [*a{i - 1}]" for i in range(1, 100)]
    with pytest.raises(FlowError, match="nesting deeper than 64 levels"):
        load_flow_text("\n".join(lines) + "\n", "chain.yaml", environ={})


def test_a_big_flow_without_aliases_is_not_taken_for_an_alias_bomb(tmp_path: Path) -> None:
    # 30,000 vars are 60,000 values written out: over the 50,000 allowed after expanding
    # aliases, yet nothing is expanded, so the file loads.
    entries = "\n".join(f"  k{i}: {i}" for i in range(30_000))
    path = tmp_path / "big.yaml"
    path.write_text(f"roost: 1\nvars:\n{entries}\n", encoding="utf-8")
    assert len(roost.load_flow(path).vars) == 30_000
