"""Whatever the input, loading gives a Flow or a FlowError: never another exception.

How long loading takes is measured in bench/limits.py, not asserted here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roost.errors import FlowError
from roost.flow import Flow, load_flow_text
from roost.flow.yamlread import decode_source

EXAMPLE = (Path(__file__).parent / "data" / "contract_example.yaml").read_text(encoding="utf-8")
ENV = {"OPENAI_API_KEY": "sk-fuzz-secret-123456"}
FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

KEYS = [
    "roost", "name", "description", "vars", "defaults", "providers", "tools", "mcp_servers",
    "agents", "channels", "start", "kind", "model", "replies", "members", "director",
    "strategy", "transitions", "provider", "role", "functions", "interrupt", "from", "to",
    "python", "flow", "mcp", "tools", "command", "url", "max_rounds", "fallback", "content",
    "USER", "bot", "team", "gpt", "mock", "openai", "scripted", "NEVER", "ALWAYS", "llm",
]  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.floats(allow_nan=False),
    st.sampled_from(KEYS),
    st.text(max_size=12),
    st.sampled_from(["${X}", "${X:-3}", "$${Y}", "{{ vars.a }}", "{% if %}", "a#b", "@@t"]),
)
structures = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5),
    ),
    max_leaves=30,
)
flowish = st.fixed_dictionaries(
    {"roost": st.just(1), "name": st.text(min_size=1, max_size=8)},
    optional={key: structures for key in KEYS[2:11]},
)


def _check(outcome: Flow | FlowError) -> None:
    if isinstance(outcome, FlowError):
        assert outcome.problems
        for problem in outcome.problems:
            assert problem.line >= 1 and problem.col >= 1
            assert "\n" not in problem.message
            assert ENV["OPENAI_API_KEY"] not in problem.message
    else:
        assert isinstance(outcome, Flow)


def _load_text(text: str) -> Flow | FlowError:
    try:
        return load_flow_text(text, "fuzz.yaml", environ=ENV)
    except FlowError as error:
        return error


def _load_bytes(data: bytes) -> Flow | FlowError:
    try:
        return _load_text(decode_source(data, "fuzz.yaml"))
    except FlowError as error:
        return error


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    _check(_load_bytes(data))


@FUZZ
@given(st.text(alphabet=st.sampled_from(list("ab:-[]{},&*!|>'\"#%@ \n\t0.~?<$")), max_size=200))
def test_random_yaml_punctuation(text: str) -> None:
    _check(_load_text(text))


@FUZZ
@given(structures)
def test_random_yaml_structures(value: Any) -> None:
    _check(_load_text(yaml.safe_dump(value, allow_unicode=True)))


@FUZZ
@given(flowish)
def test_random_flow_shaped_documents(value: dict[str, Any]) -> None:
    _check(_load_text(yaml.safe_dump(value, allow_unicode=True, sort_keys=False)))


@FUZZ
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=len(EXAMPLE)),
            st.integers(min_value=0, max_value=40),
            st.text(alphabet=st.sampled_from(list("ab:-[]{},&*!|' \n#$")), max_size=5),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_mutations_of_the_contract_example(edits: list[tuple[int, int, str]]) -> None:
    text = EXAMPLE
    for start, length, insert in edits:
        text = text[:start] + insert + text[start + length :]
    _check(_load_text(text))
