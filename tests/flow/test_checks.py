"""The checks of names and references find every problem, warnings with the errors."""

from __future__ import annotations

from tests.flow.conftest import problems


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
