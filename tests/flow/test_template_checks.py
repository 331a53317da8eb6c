"""What a template reads, and the filters and tests it names, are checked when the flow loads."""

from __future__ import annotations

import pytest

from tests.flow.conftest import load, problems


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
