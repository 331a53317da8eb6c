"""The graph of who speaks to whom: agents no route reaches, loops no cap stops."""

from __future__ import annotations

import pytest

from tests.flow.conftest import load


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
