"""A case's judges: a model grades the whole transcript against a rubric.

The judge is asked for a strict JSON verdict, ``{"pass": true|false, "reason":
"..."}``, checked against a JSON Schema (jsonschema); a reply that is not one
fails the case and says what came back. The call is recorded in the case's run
(``purpose: judge``), so its run replays without a model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jsonschema

from roost.flowtest.outside import outside_call
from roost.messages import ModelRequest, UserMessage

if TYPE_CHECKING:
    from roost.engine import Runner
    from roost.flowtest.spec import Judge, Outside

JUDGE = "judge"  # the purpose its calls are recorded with, and the node they are of
VERDICT: dict[str, Any] = {
    "type": "object",
    "properties": {"pass": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["pass", "reason"],
    "additionalProperties": False,
}
INSTRUCTION = (
    "You grade a conversation against a rubric. Answer with one JSON object and nothing "
    'else: {"pass": true or false, "reason": "one sentence saying why"}.\n\nRubric: '
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one judge said: ``passed``, and why (or what was wrong with its reply)."""

    provider: str
    passed: bool
    reason: str

    def line(self) -> str:
        word = "pass" if self.passed else "fail"
        return f"judge ({self.provider}): {word}: {self.reason}"


def judge_request(judge: Judge, transcript: list[str]) -> ModelRequest:
    """The rubric as the instruction, the transcript as the one message."""
    text = "\n".join(transcript) or "(nothing was said)"
    return ModelRequest(
        system=INSTRUCTION + judge.rubric,
        messages=(UserMessage(content=f"The conversation:\n{text}"),),
        node=JUDGE,
    )


def read_verdict(provider: str, text: str) -> Verdict:
    """The judge's reply read as a verdict; a reply that is not one fails, saying so."""
    try:
        data = json.loads(text)
        jsonschema.validate(data, VERDICT)
    except (json.JSONDecodeError, jsonschema.ValidationError) as exc:
        reason = exc.message if isinstance(exc, jsonschema.ValidationError) else "not JSON"
        shown = text if len(text) <= 200 else text[:199] + "…"
        return Verdict(provider, False, f"its reply is not a verdict ({reason}): {shown!r}")
    return Verdict(provider, bool(data["pass"]), str(data["reason"]))


async def verdict_of(
    runner: Runner, outside: Outside, judge: Judge, transcript: list[str]
) -> Verdict:
    """Asks ``judge`` about the transcript (the call recorded) and reads its verdict."""
    request = judge_request(judge, transcript)
    text = await outside_call(runner, outside, judge.provider, JUDGE, request, JUDGE)
    return read_verdict(judge.provider, text)
