"""A flow's text with a run's own vars and scripted providers written into it."""

from __future__ import annotations

import math
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from roost.errors import FlowError
from roost.flow import check_flow_text, load_flow_text
from roost.flow.overrides import flow_text_with, inline_yaml

FLOW = """\
roost: 1
vars:
  persona: a careful
    mathematician
  items:
  - a
  - b
  note: |
    line one
    line two
  last: {a: 1}
providers:
  gpt: {kind: openai, model: gpt-4o-mini, api_key: "${NO_SUCH_KEY_FOR_ROOST}"}
  other:
    kind: openai
    model: gpt-4o
    api_key: ${NO_SUCH_KEY_FOR_ROOST}
agents:
  USER:
    role: "Hi {{ vars.persona }} {{ vars.items }} {{ vars.note }} {{ vars.last }}"
    provider: gpt
  bot: {role: b, provider: gpt}
  bad: {role: b, provider: other, nonsense: 1}
start: {from: USER, to: bot, content: hi}
"""
SCRIPTED = {"kind": "scripted", "replies": ["4", {"tool_calls": [{"name": "add"}]}]}


def test_values_are_replaced_and_every_other_line_keeps_its_number() -> None:
    values = {"persona": "terse: yes", "items": ["c"], "note": "x\ny", "last": None}
    text = flow_text_with(
        FLOW, "f.yaml", variables=values, providers={"gpt": SCRIPTED, "other": SCRIPTED}
    )
    data = yaml.safe_load(text)
    assert data["vars"] == values
    assert data["providers"] == {"gpt": SCRIPTED, "other": SCRIPTED}
    assert len(text.splitlines()) == len(FLOW.splitlines())
    # The unknown key of agent 'bad' is still found where the file has it.
    problems = check_flow_text(text, "f.yaml").problems
    assert [str(p) for p in problems if p.severity == "error"] == [
        "f.yaml:23:35: error: unknown key 'nonsense' in agent 'bad'"
    ]


def test_a_scripted_provider_needs_nothing_from_the_environment() -> None:
    fixed = FLOW.replace(", nonsense: 1", "")
    with pytest.raises(FlowError, match="NO_SUCH_KEY_FOR_ROOST"):
        load_flow_text(fixed, "f.yaml", environ={})
    text = flow_text_with(fixed, "f.yaml", providers={"gpt": SCRIPTED, "other": SCRIPTED})
    flow = load_flow_text(text, "f.yaml", environ={})
    assert flow.providers["gpt"].kind == "scripted"


def test_placeholders_outside_what_is_replaced_stay_unexpanded() -> None:
    text = flow_text_with(FLOW, "f.yaml", variables={"persona": "x"})
    assert text.count("${NO_SUCH_KEY_FOR_ROOST}") == 2


@pytest.mark.parametrize(
    ("variables", "providers", "expected"),
    [
        ({"whom": 1}, None,
         "f.yaml:2:1: error: the flow has no var 'whom' (vars: persona, items, note, last)"),
        (None, {"claude": SCRIPTED},
         "f.yaml:12:1: error: the flow has no provider 'claude' (providers: gpt, other)"),
    ],
)  # fmt: skip
def test_a_name_the_flow_lacks_is_a_located_error(
    variables: dict[str, Any] | None, providers: dict[str, Any] | None, expected: str
) -> None:
    with pytest.raises(FlowError) as caught:
        flow_text_with(FLOW, "f.yaml", variables=variables, providers=providers)
    assert str(caught.value) == expected


def test_a_flow_without_vars_has_none_to_set() -> None:
    with pytest.raises(FlowError, match=r"f.yaml:1:1: error: the flow has no var 'a' \(no vars"):
        flow_text_with("roost: 1\n", "f.yaml", variables={"a": 1})


def test_values_in_a_flow_style_mapping_are_replaced_in_place() -> None:
    text = flow_text_with("roost: 1\nvars: {a: 1, b: two}\n", "f.yaml", variables={"b": "z"})
    assert text == 'roost: 1\nvars: {a: 1, b: "z"}\n'


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(st.characters(exclude_categories=("Cs",)))
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(st.characters(exclude_categories=("Cs",))), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(_VALUES)
def test_any_value_reads_back_the_same(value: Any) -> None:
    written = inline_yaml(value)
    assert "\n" not in written
    assert _same(yaml.safe_load(f"key: {written}\n")["key"], value)
    text = flow_text_with("roost: 1\nvars:\n  v: 0\n", "f.yaml", variables={"v": value})
    assert _same(load_flow_text(text, "f.yaml").vars["v"], value)


def _same(read: Any, value: Any) -> bool:
    if isinstance(value, float) and isinstance(read, float):
        return read == value or (math.isinf(value) and read == value)
    if isinstance(value, dict):
        return (
            isinstance(read, dict)
            and read.keys() == value.keys()
            and all(_same(read[k], value[k]) for k in value)
        )
    if isinstance(value, list):
        return (
            isinstance(read, list)
            and len(read) == len(value)
            and all(_same(a, b) for a, b in zip(read, value, strict=True))
        )
    return type(read) is type(value) and read == value
