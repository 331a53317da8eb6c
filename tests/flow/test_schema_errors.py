"""What the models refuse is told in the flow's words, and dropped so the rest is still checked."""

from __future__ import annotations

from tests.flow.conftest import problems


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
