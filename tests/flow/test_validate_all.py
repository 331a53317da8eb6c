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
from roost.flow.describe import MAX_HINTS, did_you_mean
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


def test_a_dropped_entry_still_exists_for_the_references_to_it() -> None:
    found = problems(
        """
        roost: 1
        providers:
          gpt: {kind: openai}
          cheap: {kind: scripted, temperature: hot}
        defaults: {provider: cheap}
        agents:
          a: {provider: gpt, max_rounds: 3}
          b: {provider: cheap}
        channels:
          c: {members: [a, b], director: {strategy: llm, seed: x}}
          d: {members: 7}
        start: {from: b, to: d}
        """
    )
    assert found == [
        "flow.yaml:4:3: error: provider 'gpt' needs the key 'model'",
        "flow.yaml:5:40: error: temperature of provider 'cheap': expected a number",
        # (not the nearest key an agent has, max_background: where max_rounds belongs)
        "flow.yaml:8:22: error: unknown key 'max_rounds' in agent 'a' "
        "('max_rounds' belongs in defaults: or a channel (channels:), not here)",
        "flow.yaml:11:56: error: director.seed of channel 'c': expected an integer",
        "flow.yaml:12:16: error: members of channel 'd': expected a list",
    ]


def test_a_wrong_version_does_not_hide_the_rest() -> None:
    found = problems("roost: 2\nagents:\n  a: {provider: nope}\n")
    assert found == [
        "flow.yaml:1:8: error: unsupported format version; write 'roost: 1'",
        "flow.yaml:3:17: error: no provider named 'nope' under providers",
    ]
    found = problems("agents:\n  a: {provider: nope}\n")
    assert "missing the format version" in found[0] and "'nope'" in found[1]


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


# --------------------------------------------------------------------------- templates


@pytest.mark.parametrize(
    ("role", "message"),
    [
        (
            '"You are {{ vars.persona }}."',
            "role of agent 'a': vars.persona is not set under vars (did you mean 'personas'?)",
        ),
        ("\"You are {{ vars['persona'] }}.\"", "vars.persona is not set under vars"),
        (
            '"You are {{ persona }}."',
            "the template reads 'persona', which is not defined "
            "(a template may read vars, name, members, now, last)",
        ),
        ('"{{ nmae }}"', "the template reads 'nmae', which is not defined (did you mean 'name'?)"),
        ('"{{ name|uppper }}"', "no filter named 'uppper' (did you mean 'upper'?)"),
        ('"{% if name is odd_one %}x{% endif %}"', "no test named 'odd_one'"),
        ('"{{ vars.personas.x.y }} {{ vars.items()|list }}"', None),
        ('"{{ vars.persona|default(name) }}"', None),
        ('"{% if vars.persona is defined %}{{ vars.persona }}{% endif %}"', None),
        ('"{% set x = 1 %}{% for m in members %}{{ m }}{{ x }}{{ loop.index }}{% endfor %}"', None),
        ('"{% macro hi(who) %}{{ who }}{% endmacro %}{{ hi(name) }} {{ range(2)|list }}"', None),
        ("\"{{ now }} {{ members|join(', ') }} {{ lipsum(1)|length > 0 }}\"", None),
    ],
)
def test_what_a_template_reads_is_checked_when_the_flow_loads(
    role: str, message: str | None
) -> None:
    agent = f"  a: {{interrupt: ALWAYS, role: {role}}}\n"
    text = f"roost: 1\nvars: {{personas: {{x: {{y: 1}}}}}}\nagents:\n{agent}"
    if message is None:
        load(text)
        return
    found = problems(text)
    assert len(found) == 1
    assert found[0].startswith("flow.yaml:4:")
    assert message in found[0]


def test_a_template_problem_is_located_on_its_own_line_of_a_block() -> None:
    found = problems(
        """
        roost: 1
        agents:
          a:
            interrupt: ALWAYS
            role: |
              You help.
              You are {{ vars.mood }}.
        """
    )
    assert found == ["flow.yaml:8:1: error: role of agent 'a': vars.mood is not set under vars"]


def test_director_prompts_may_read_their_own_names() -> None:
    flow = """
    roost: 1
    defaults: {provider: p}
    providers: {p: {kind: scripted}}
    agents: {a: {}, b: {}}
    channels:
      c:
        members: [a, b]
        director: {prompt: "PROMPT"}
    """
    load(flow.replace("PROMPT", "{{ channel }} {{ candidates|length }} {{ conversation|join }}"))
    found = problems(flow.replace("PROMPT", "{{ candidate }}"))
    assert "reads 'candidate', which is not defined (did you mean 'candidates'?)" in found[0]
    found = problems(flow.replace('director: {prompt: "PROMPT"}', 'role: "{{ channel }}"'))
    assert "reads 'channel'" in found[0]  # a channel's role is a role: no channel there


START = """
roost: 1
vars: {a: 2, b: 3}
defaults: {provider: p}
providers: {p: {kind: scripted, replies: [five]}}
agents: {USER: {role: A person.}, bot: {role: You add.}}
start: {from: USER, to: bot, content: "CONTENT"}
"""


async def test_the_start_message_is_a_template_rendered_before_it_is_sent() -> None:
    flow = load(
        START.replace("CONTENT", "How much is {{ vars.a }} + {{ vars.b }}, {{ members[1] }}?")
    )
    log = MemoryLog("r")
    await Runner(flow=flow, log=log).start()
    said = [e.content for e in log.load() if e.type == "message"]  # type: ignore[attr-defined]
    assert said[0] == "How much is 2 + 3, bot?"
    log = MemoryLog("r2")  # a message given when the run starts is sent as written
    await Runner(flow=flow, log=log).start("{{ vars.a }}")
    first = next(e for e in log.load() if e.type == "message")
    assert first.content == "{{ vars.a }}"  # type: ignore[attr-defined]


def test_the_start_message_is_checked_like_a_role() -> None:
    found = problems(START.replace("CONTENT", "{{ vars.c }} and {% if %}"))
    assert found == [
        "flow.yaml:7:39: error: content of start: template does not parse: "
        "Expected an expression, got 'end of statement block'"
    ]
    found = problems(START.replace("CONTENT", "{{ vars.c }}"))
    assert found == ["flow.yaml:7:39: error: content of start: vars.c is not set under vars"]


# --------------------------------------------------------------------------- did you mean


def test_choices_and_tool_names_get_a_did_you_mean() -> None:
    found = problems(
        """
        roost: 1
        providers: {p: {kind: opneai, model: x}}
        tools:
          math:
            tools: {sqrt: {python: "m:sqrt"}}
        agents:
          a: {provider: q, functions: ["math#sqrtt", "math:sqrt", "maths"], interrupt: always}
        channels:
          c: {members: [a, a2], director: {strategy: round-robin}}
        """
    )
    assert found == [
        "flow.yaml:3:23: error: kind of provider 'p' must be one of openai, openai-responses, "
        "anthropic, scripted (did you mean 'openai'?)",
        "flow.yaml:8:17: error: no provider named 'q' under providers",
        "flow.yaml:8:32: error: tool group 'math' has no tool 'sqrtt' (did you mean 'sqrt'?)",
        "flow.yaml:8:46: error: no tool named 'math:sqrt' under tools (did you mean 'math#sqrt'?)",
        "flow.yaml:8:59: error: no tool named 'maths' under tools (did you mean 'math'?)",
        "flow.yaml:8:80: error: interrupt of agent 'a': must be one of NEVER, ALWAYS"
        " (did you mean 'ALWAYS'?)",
        "flow.yaml:10:20: error: member 'a2' of channel 'c' is not an agent (did you mean 'a'?)",
        "flow.yaml:10:46: error: director.strategy of channel 'c': must be one of llm, "
        "round_robin, random, manual (did you mean 'round_robin'?)",
    ]


def test_hints_are_capped_per_file_and_bounded_per_name() -> None:
    agents = "".join(f"  agent{i}: {{interrupt: ALWAYS}}\n" for i in range(300))
    members = ", ".join(f"agnet{i}" for i in range(300))
    text = f"roost: 1\nagents:\n{agents}channels:\n  c: {{members: [{members}]}}\n"
    checked = check_flow_text(text, "f.yaml", environ={})
    unknown = [p for p in checked.problems if "is not an agent" in p.message]
    assert len(unknown) == 300
    assert sum("did you mean" in p.message for p in unknown) == MAX_HINTS
    assert did_you_mean("x" * 65, ["x" * 65 + "y"]) == ""  # no hint for a name that long
    assert did_you_mean("agnet7", ["agent7"]) == " (did you mean 'agent7'?)"


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


# --------------------------------------------------------------------------- YAML


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (
            "roost: 1\nagents:\n  a:\n    role: x\n   provider: p\n",
            "5:4",
            "not indented like the keys of the mapping at line 3",
        ),
        ("roost: 1\nagents:\n  a: {}\n    b: {}\n", "4:5", "not indented like the keys of the m"),
        (
            "roost: 1\nchannels:\n  c:\n    members:\n    - a\n  - b\n",
            "6:3",
            "a list item ('-') among the keys of the mapping at line 3",
        ),
        ("roost: 1\nname: a: b\n", "2:8", "a value holding ': ' must be quoted"),
        ("roost: 1\nagents\n  a: {}\n", "3:4", "the key at line 2 has no ':' after it"),
        ('roost: 1\nname: "abc\n', "3:1", "the quoted text that starts at line 2 is never closed"),
        ("roost: 1\nname: [a, b\n", "3:1", "the '[' at line 2 is not closed"),
        (
            "roost: 1\nagents:\n  a: {role: You are: a helper}\n",
            "3:20",
            "the value of 'role' holds an unquoted ': ' (column 20): quote the value",
        ),
        ("roost: 1\nagents:\n  a: {role: x, b: c\n", "4:1", "the '{' at line 3 is not closed"),
        ("roost: 1\nname: *nope\n", "2:7", "'*nope' names no anchor '&nope' written before it"),
        ("roost: 1\nagents:\n\ta: {}\n", "3:1", "a tab ('\\t') in the indentation"),
        ("roost: 1\nname: @x\n", "2:7", "'@' cannot start a value here"),
    ],
)
def test_yaml_mistakes_are_told_in_plain_words(text: str, where: str, words: str) -> None:
    found = problems(text)
    assert len(found) == 1
    assert found[0].startswith(f"flow.yaml:{where}: error: invalid YAML: "), found[0]
    assert words in found[0]


# --------------------------------------------------------------------------- secrets


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
