"""Problems name what they are about in words, with a did-you-mean hint, bounded per file."""

from __future__ import annotations

from roost.flow import check_flow_text
from roost.flow.describe import MAX_HINTS, did_you_mean
from tests.flow.conftest import problems


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
