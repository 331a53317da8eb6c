"""Model calls a case makes outside its flow: a simulated person's, a judge's.

Each is made between the run's steps, through a provider of the flow or of
the test file's own ``providers:``, and recorded in the case's run as an
``llm_call`` marked with its ``purpose`` (``simulated_person``, ``judge``):
a replay carries it over as recorded, so the case's run replays without a
model, and a scripted provider's position counts it like any call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.engine.call_records import attempt_records, response_record, usage_record
from roost.engine.calls import error_text
from roost.engine.defaults import default_provider
from roost.engine.digests import request_digest
from roost.errors import RoostError
from roost.events import LlmCallEvent, map_texts, now_iso
from roost.flow.redact import Redactor

if TYPE_CHECKING:
    from roost.engine import Runner
    from roost.flowtest.spec import Outside
    from roost.messages import ModelRequest


_WHO = {"simulated_person": "user", "judge": "judge"}  # the key of the case that failed


class OutsideCallFailed(RoostError):
    """The provider of a judge or a simulated person failed (the call is recorded)."""


async def outside_call(
    runner: Runner,
    outside: Outside,
    name: str,
    node: str,
    request: ModelRequest,
    purpose: str,
) -> str:
    """The text ``name`` answers ``request`` with, the call recorded in the run (what the
    flow's and the test file's placeholders read masked in it)."""
    flow = runner.flow
    if outside.providers:
        flow = flow.model_copy(update={"providers": {**flow.providers, **outside.providers}})
    redact = Redactor(flow.secrets | outside.secrets)
    digest = request_digest(request.system, (), b"", request.messages).finish(b"")
    common = {"seq": 0, "run": runner.run_id, "ts": now_iso(), "node": node, "provider": name}
    try:
        provider = default_provider(flow, runner.state, name)
        response = await provider.complete(request)
    except Exception as exc:  # a provider that cannot be built or that fails: recorded
        said = redact(error_text(exc))
        failed = LlmCallEvent(
            **common, model="", request_digest=digest, error=said, purpose=purpose
        )
        await runner.note(failed)
        raise OutsideCallFailed(f"{_WHO.get(purpose, purpose)}: {said}") from None
    model, record, attempts = map_texts(
        (
            response.model or str(getattr(provider, "model", "")),
            response_record(response, keep_calls=False),
            attempt_records(response.attempts),
        ),
        redact,
    )
    event = LlmCallEvent(
        **common,
        model=model,
        request_digest=digest,
        response=record,
        usage=usage_record(response),
        attempts=attempts,
        purpose=purpose,
    )
    await runner.note(event)
    return str(record.text)
