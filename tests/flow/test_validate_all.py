"""One ``roost validate`` finds every problem: no stage hides another, templates included."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from roost.engine import Runner
from roost.errors import FlowError, ToolFailure
from roost.flow import check_flow_text
from roost.flow.loader import MAX_PROBLEMS
from roost.loading import load_flow
from roost.ports import MemoryLog
from roost.tools import toolbox_for
from tests.cli_inprocess import run_cli
from tests.flow.conftest import load, problems
from tests.tools.conftest import DATA, make_flow

if TYPE_CHECKING:
    from collections.abc import Callable


def test_a_missing_variable_a_bad_reference_a_bad_type_and_a_bad_import_at_once(
    tmp_path: Path,
) -> None:
    (tmp_path / "f.yaml").write_text(
        textwrap.dedent(
            """\
            roost: 1
            providers:
              gpt: {kind: openai, model: x, api_key: "${ROOST_TEST_NEVER_SET}"}
            tools:
              lookup: {python: "no_such_module:lookup"}
            agents:
              a: {provider: gpt, role: "You are {{ vars.persona }}.", functions: [lookup]}
              b: {provider: gtp, max_tool_calls: many}
            channels:
              c: {members: [a, b, ghost], max_rounds: "10", director: {strategy: random}}
            """
        )
    )
    done = run_cli("validate", "f.yaml", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    expected = [
        "f.yaml:3:42: error: environment variable 'ROOST_TEST_NEVER_SET' is not set",
        "f.yaml:5:12: error: tool 'lookup': cannot import 'no_such_module'",
        "f.yaml:7:28: error: role of agent 'a': vars.persona is not set under vars",
        "f.yaml:8:17: error: no provider named 'gtp' under providers (did you mean 'gpt'?)",
        "f.yaml:8:38: error: max_tool_calls of agent 'b': expected an integer",
        "f.yaml:10:23: error: member 'ghost' of channel 'c' is not an agent",
        "f.yaml:10:43: error: max_rounds of channel 'c': expected an integer",
    ]
    assert len(lines) == len(expected), done.stdout
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(start), (line, start)
    assert "Traceback" not in done.stderr


def test_yaml_problems_that_do_not_stop_reading_are_reported_with_the_rest() -> None:
    found = problems(
        """
        roost: 1
        agents:
          a: {provider: p}
          a: {provider: q}
          b: !custom {role: x}
        channels:
          c: {members: [a, b, z], director: {strategy: manual}}
        """
    )
    assert found == [
        "flow.yaml:4:17: error: no provider named 'p' under providers",
        "flow.yaml:5:3: error: duplicate key 'a' (first at line 4)",
        "flow.yaml:6:6: error: YAML tag '!custom' is not allowed in a flow",
        "flow.yaml:8:23: error: member 'z' of channel 'c' is not an agent",
    ]


def test_an_mcp_tool_is_checked_when_its_server_runs_and_its_tools_are_named() -> None:
    # A server's tools are known only by starting it, which validation never does.
    flow = make_flow(
        {
            "mcp_servers": {"calc": {"command": sys.executable, "args": ["mcp_stdio_server.py"]}},
            "agents": {"a": {"functions": ["calc#ad"]}},
        },
        DATA,
    )
    toolbox = toolbox_for(flow)
    try:
        with pytest.raises(ToolFailure) as caught:
            toolbox("a", "")
    finally:
        toolbox.close()
    message = str(caught.value)
    assert message.startswith(
        "MCP server 'calc' has no tool 'ad' (did you mean 'add'?); it offers "
    )
    assert "add, greet, explode" in message


SECRET = "sk-test-0123456789"


@pytest.mark.parametrize(
    ("where", "label"),
    [
        ('vars: {k: "${API_KEY}"}', "k of vars"),
        ('vars: {deep: {list: ["x ${API_KEY}"]}}', "deep.list[0] of vars"),
        ('agents: {a: {interrupt: ALWAYS, role: "Key ${API_KEY}"}}', "role of agent 'a'"),
        ('agents: {a: {interrupt: ALWAYS, description: "${API_KEY}"}}', "description of agent 'a'"),
        ('start: {from: a, to: b, content: "${API_KEY}"}', "content of start"),
    ],
)
def test_templates_never_read_a_secret(where: str, label: str) -> None:
    text = f"roost: 1\n{where}\n"
    checked = check_flow_text(text, "f.yaml", environ={"API_KEY": SECRET})
    messages = [p.message for p in checked.problems if "environment" in p.message]
    assert messages == [
        f"{label}: templates may not read the environment variable 'API_KEY': a template could "
        "copy a secret into events in a form that is not masked; list it under public_env if "
        "it is not secret"
    ]
    assert all(SECRET not in str(p) for p in checked.problems)


async def test_a_variable_marked_public_may_be_read_and_is_not_masked() -> None:
    text = """
    roost: 1
    public_env: [REGION]
    vars: {region: "${REGION}"}
    defaults: {provider: p}
    providers: {p: {kind: scripted, replies: ["{echo: system}"], api_key: "${API_KEY}"}}
    agents: {USER: {role: A person.}, bot: {role: "You serve {{ vars.region|upper }}."}}
    start: {from: USER, to: bot, content: hi}
    """.replace('"{echo: system}"', "{echo: system}")
    flow = load(text, REGION="eu-west", API_KEY=SECRET)
    assert flow.secrets == frozenset({SECRET})
    log = MemoryLog("r")
    await Runner(flow=flow, log=log).start()
    said = [e.content for e in log.load() if e.type == "message"]  # type: ignore[attr-defined]
    assert said[1] == "You serve EU-WEST."
    with pytest.raises(
        FlowError, match="templates may not read the environment variable 'API_KEY'"
    ):
        load(
            text.replace("vars: {region:", "vars: {key: '${API_KEY}', region:"),
            REGION="x",
            API_KEY=SECRET,
        )


def test_secrets_where_roost_reads_them_itself_are_fine() -> None:
    flow = load(
        """
        roost: 1
        providers: {gpt: {kind: openai, model: "${MODEL}", api_key: "${API_KEY}"}}
        mcp_servers: {s: {url: "http://h/mcp", headers: {Authorization: "Bearer ${API_KEY}"}}}
        agents: {a: {provider: gpt}}
        """,
        API_KEY=SECRET,
        MODEL="gpt-x",
    )
    assert flow.secrets == frozenset({SECRET, "gpt-x"})


def test_every_example_flow_and_the_docs_example_still_validate() -> None:
    root = Path(__file__).resolve().parents[2]
    for path in sorted((root / "flows").rglob("*.yaml")):
        if path.name.endswith(".test.yaml"):
            continue  # the flows' tests (roost test), not flows
        load_flow(path, environ={"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "sk-y"})


@pytest.mark.parametrize(
    "line",
    [
        lambda i: f"  a{i}: {{rolle: x}}\n",  # the models refuse each: read as far as listed
        lambda i: f"  a{i}: {{provider: p{i}}}\n",  # the checks find each
    ],
)
def test_a_file_with_thousands_of_problems_lists_the_first_thousand(
    line: Callable[[int], str],
) -> None:
    text = "roost: 1\nagents:\n" + "".join(line(i) for i in range(1500))
    listed = check_flow_text(text, "f.yaml", environ={}).problems
    assert len(listed) == MAX_PROBLEMS + 1
    assert listed[-1].message.endswith("the first 1,000 are listed, fix these first")
    assert (listed[-1].line, listed[-1].col) == (listed[-2].line, listed[-2].col)
