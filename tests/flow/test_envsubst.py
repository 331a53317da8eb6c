"""``${NAME}`` substitution: types, defaults, escapes, errors, and secrets kept out of messages."""

from __future__ import annotations

import pytest

from roost.errors import FlowError
from roost.flow import load_flow_text
from roost.flow.envsubst import typed
from tests.flow.conftest import load, problems

SECRET = "sk-live-7f3a9c2e5b1d"

BASE = """\
roost: 1
name: env
providers:
  gpt:
    kind: openai
    model: ${MODEL:-gpt-4o-mini}
    api_key: ${OPENAI_API_KEY}
    max_tokens: ${MAX_TOKENS:-1024}
    stream: ${STREAM:-false}
    base_url: "http://${HOST:-127.0.0.1}:${PORT:-8080}/v1"
agents:
  bot: {provider: gpt, role: "Use $${HOME} literally"}
"""


def test_values_are_substituted_typed_and_recorded_as_secrets() -> None:
    flow = load(BASE, OPENAI_API_KEY=SECRET, PORT="9999")
    gpt = flow.providers["gpt"]
    assert gpt.api_key == SECRET
    assert gpt.model == "gpt-4o-mini"
    assert gpt.max_tokens == 1024
    assert gpt.stream is False
    assert gpt.base_url == "http://127.0.0.1:9999/v1"
    assert flow.agents["bot"].role == "Use ${HOME} literally"
    assert flow.secrets == frozenset({SECRET, "9999"})
    assert "${OPENAI_API_KEY}" in flow.text
    assert SECRET not in flow.text


def test_an_empty_variable_takes_the_default_as_in_a_shell() -> None:
    flow = load(BASE, OPENAI_API_KEY=SECRET, MODEL="")
    assert flow.providers["gpt"].model == "gpt-4o-mini"


def test_a_whole_placeholder_takes_the_type_of_its_expansion() -> None:
    flow = load(BASE, OPENAI_API_KEY=SECRET, MAX_TOKENS="77", STREAM="true")
    assert flow.providers["gpt"].max_tokens == 77
    assert flow.providers["gpt"].stream is True


@pytest.mark.parametrize(
    ("text", "value"),
    [("5", 5), ("2.5", 2.5), ("true", True), ("no", False), ("", None), ("~", None)],
)
def test_typed_reads_yaml_scalars(text: str, value: object) -> None:
    assert typed(text) == value


@pytest.mark.parametrize("text", ["hello", "[1, 2]", "{a: b}", "2024-01-01", "a: b"])
def test_typed_keeps_anything_else_as_text(text: str) -> None:
    assert typed(text) == text


def test_unset_variable_without_default_is_located_and_named() -> None:
    assert problems(BASE) == [
        "flow.yaml:7:14: error: environment variable 'OPENAI_API_KEY' is not set "
        "(write ${OPENAI_API_KEY:-default} to give a default)"
    ]


def test_every_unset_variable_is_reported() -> None:
    lines = problems("roost: 1\nname: ${A}\ndescription: ${B} and ${C}\n")
    assert [line.split(": error: ")[0] for line in lines] == [
        "flow.yaml:2:7",
        "flow.yaml:3:14",
        "flow.yaml:3:14",
    ]
    assert "'A'" in lines[0] and "'B'" in lines[1] and "'C'" in lines[2]


@pytest.mark.parametrize(
    "text",
    [
        # the secret is a provider name that does not exist
        "roost: 1\nname: e\nagents:\n  a: {provider: '${S}'}\n",
        # the secret is not an integer
        "roost: 1\nname: e\ndefaults: {max_rounds: '${S}'}\n",
        # the secret is not one of a literal's values
        "roost: 1\nname: e\ndefaults: {interrupt: '${S}'}\n",
        # the secret is an unknown provider kind
        "roost: 1\nname: e\nproviders:\n  p: {kind: '${S}', model: m}\n",
        # the secret is a member, a start route and a tool reference
        "roost: 1\nname: e\ndefaults: {provider: p}\nproviders: {p: {kind: scripted}}\n"
        "agents: {a: {functions: ['${S}', 'x#${S}']}, b: {}}\n"
        "channels: {c: {members: [a, '${S}']}}\nstart: {from: '${S}', to: '${S}'}\n",
        # the secret is a template that does not parse
        "roost: 1\nname: e\ndefaults: {provider: p}\nproviders: {p: {kind: scripted}}\n"
        "agents: {a: {role: '{% if ${S} %}'}}\n",
        # the secret is mixed into a python tool path
        "roost: 1\nname: e\ntools: {t: {python: 'mod:${S}'}}\n",
    ],
)
def test_a_secret_never_appears_in_any_message(text: str) -> None:
    with pytest.raises(FlowError) as caught:
        load_flow_text(text, "flow.yaml", environ={"S": SECRET})
    assert caught.value.problems, "the flow must fail"
    assert SECRET not in str(caught.value)
    assert all(SECRET not in str(p) for p in caught.value.problems)


def test_a_secret_is_masked_in_flow_problems_built_later() -> None:
    flow = load(BASE, OPENAI_API_KEY=SECRET)
    problem = flow.problem(("providers", "gpt", "api_key"), f"key {SECRET} was refused")
    assert SECRET not in str(problem)
    assert "***" in str(problem)


def test_short_secrets_are_masked_only_as_whole_words() -> None:
    flow = load(BASE, OPENAI_API_KEY="ab")
    assert flow.problem((), "ab of abc failed").message == "*** of abc failed"
