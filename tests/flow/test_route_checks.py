"""Validation of conditional routes and structured replies: one located line each."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import pytest

from roost.flow.models import FieldCondition, Route, plain_successors, routes_in
from roost.tools import check_flow_tools
from tests.flow.conftest import load, problems

if TYPE_CHECKING:
    from pathlib import Path

FLOW = """\
roost: 1
providers: {m: {kind: scripted, replies: []}}
defaults: {provider: m}
agents:
  writer: {role: writes}
  critic:
    role: reviews
    reply_format:
      type: object
      properties:
        verdict: {enum: [approve, revise]}
        score: {type: number}
        review: {type: object, properties: {tone: {type: string}}}
      required: [verdict]
  editor: {role: edits}
channels:
  review:
    members: [writer, critic, editor]
    director: {strategy: %s}
    transitions:
      writer: [critic]
      critic:
%s
      editor: [writer]
"""


def flow_text(routes: str, strategy: str = "round_robin") -> str:
    return FLOW % (strategy, textwrap.indent(textwrap.dedent(routes), " " * 8))


def lines(routes: str, strategy: str = "round_robin") -> list[str]:
    return problems(flow_text(routes, strategy))


def test_mixed_names_and_routes_parse() -> None:
    flow = load(
        flow_text(
            """\
            - editor
            - to: writer
              when: {field: verdict, equals: revise}
            - {to: TERMINATE, when: {all: [{contains: done}, {not: {matches: "x+"}}]}}
            - {to: writer, when: {any: [{equals: again}, {field: review.tone, in: [a, b]}]}}
            - {to: editor, when: {field: score, gt: 0.5}}
            - {to: editor, when: {field: score, lt: 2}}
            - {to: editor, when: {field: review.tone, matches: "^c"}}
            """
        )
    )
    entry = flow.channels["review"].transitions["critic"]  # type: ignore[index]
    assert plain_successors(entry) == ("editor",)
    routes = routes_in(entry)
    assert [r.to for r in routes] == ["writer", "TERMINATE", "writer", "editor", "editor", "editor"]
    first = routes[0].when
    assert isinstance(first, FieldCondition) and first.equals == "revise"
    assert isinstance(routes[0], Route)


def test_a_field_the_reply_format_lacks() -> None:
    found = lines("- {to: writer, when: {field: verdit, equals: revise}}\n")
    assert found == [
        "flow.yaml:23:38: error: field 'verdit' is not in the reply_format of agent 'critic'"
    ]


def test_a_nested_field_the_reply_format_lacks() -> None:
    found = lines("- {to: writer, when: {field: review.mood, equals: x}}\n- writer\n")
    assert found == [
        "flow.yaml:23:38: error: field 'review.mood' is not in the reply_format of agent 'critic'"
    ]


def test_a_field_on_a_member_without_reply_format() -> None:
    text = flow_text("- writer\n").replace(
        "      editor: [writer]", "      editor: [{to: writer, when: {field: v, equals: x}}]"
    )
    assert problems(text) == [
        "flow.yaml:25:43: error: field 'v': agent 'editor' has no reply_format, "
        "so its replies have no data"
    ]


def test_an_equals_outside_the_enum() -> None:
    found = lines("- {to: writer, when: {field: verdict, equals: revize}}\n")
    assert found == [
        "flow.yaml:23:55: error: 'revize' is not one of the values of 'verdict': "
        "'approve', 'revise'"
    ]


def test_an_in_value_outside_the_enum() -> None:
    found = lines("- {to: writer, when: {field: verdict, in: [revise, nope]}}\n")
    assert found == [
        "flow.yaml:23:60: error: 'nope' is not one of the values of 'verdict': 'approve', 'revise'"
    ]


def test_a_regex_that_does_not_compile() -> None:
    found = lines("- {to: writer, when: {matches: '(unclosed'}}\n- editor\n")
    assert len(found) == 1
    assert found[0].startswith("flow.yaml:23:40: error: the regular expression '(unclosed'")


def test_a_field_regex_that_does_not_compile() -> None:
    found = lines("- {to: writer, when: {field: verdict, matches: '[a'}}\n- editor\n")
    assert len(found) == 1 and "'[a' does not compile" in found[0]


def test_a_field_test_needs_exactly_one_operator() -> None:
    found = lines("- {to: writer, when: {field: score, gt: 1, lt: 2}}\n- editor\n")
    assert found == [
        "flow.yaml:23:24: error: a field test needs one of equals, in, matches, gt or lt "
        "(found gt, lt)"
    ]


def test_a_route_to_no_member() -> None:
    found = lines("- {to: writter, when: {contains: x}}\n- editor\n")
    assert found == [
        "flow.yaml:23:16: error: route to 'writter' in channel 'review': 'writter' is not a "
        "member (write a member or TERMINATE) (did you mean 'writer'?)"
    ]


def test_terminate_is_a_target() -> None:
    load(flow_text("- {to: TERMINATE, when: {contains: done}}\n- editor\n"))


def test_a_reply_format_that_is_no_json_schema() -> None:
    text = flow_text("- editor\n").replace("type: object\n", "type: objekt\n", 1)
    found = problems(text)
    assert len(found) == 1
    assert found[0].startswith(
        "flow.yaml:8:5: error: reply_format of agent 'critic' is not a valid JSON Schema"
    )


def test_routes_that_can_never_hold_warn() -> None:
    # a route to the speaker itself (allow_repeat false) and an empty ``in`` never hold
    routes = "- {to: critic, when: {contains: x}}\n- {to: editor, when: {field: verdict, in: []}}\n"
    flow = load(flow_text(routes))
    assert [str(w) for w in flow.warnings] == [
        "flow.yaml:22:7: warning: member 'critic' of channel 'review': none of its routes can "
        "hold and it has no plain successor, so the run ends after it speaks"
    ]


def test_routes_that_may_hold_do_not_warn() -> None:
    flow = load(
        flow_text(
            """\
            - {to: writer, when: {field: verdict, equals: revise}}
            - {to: editor, when: {field: verdict, equals: approve}}
            """
        )
    )
    assert flow.warnings == ()


def test_conditions_on_a_manual_channel_are_fine() -> None:
    flow = load(flow_text("- {to: writer, when: {contains: x}}\n- editor\n", strategy="manual"))
    assert flow.warnings == ()


def test_a_python_condition_that_does_not_import(tmp_path: Path) -> None:
    (tmp_path / "conds.py").write_text("def ok(text, data):\n    return True\n\nvalue = 3\n")
    text = flow_text(
        """\
        - {to: writer, when: {python: "conds:ok"}}
        - {to: editor, when: {python: "nomodule:ok"}}
        - {to: editor, when: {not: {python: "conds:value"}}}
        """
    )
    path = tmp_path / "flow.yaml"
    path.write_text(text)
    from roost.flow import read_flow

    found = [str(p) for p in check_flow_tools(read_flow(path))]
    assert len(found) == 2
    assert found[0].startswith(f"{path}:24:31: error: python condition 'nomodule:ok': ")
    assert found[1].startswith(f"{path}:25:37: error: python condition 'conds:value': ")
    assert "not callable" in found[1]


def test_validate_reports_a_python_condition_that_does_not_import(tmp_path: Path) -> None:
    from roost import load_flow
    from roost.errors import FlowError

    path = tmp_path / "flow.yaml"
    path.write_text(flow_text('- {to: writer, when: {python: "nomodule:ok"}}\n'))
    with pytest.raises(FlowError) as caught:
        load_flow(path)
    assert [str(p).split(": cannot")[0] for p in caught.value.problems] == [
        f"{path}:23:31: error: python condition 'nomodule:ok'"
    ]
