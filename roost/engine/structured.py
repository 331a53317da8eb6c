"""Structured replies: an agent's ``reply_format`` as a request asks for it, and the check.

The schema is sent to the model by each backend in its API's own form; the
reply that comes back is checked here with ``jsonschema``, so every backend
(the scripted one included) is held to the same rule. A problem is one line
naming where the reply goes wrong, as the model is told when it is asked again.
"""

from __future__ import annotations

import json
import re
from typing import Any

from roost.messages import ReplyFormat

__all__ = ["ASK_AGAIN", "make_format", "reply_data", "reply_problem"]

ASK_AGAIN = (
    "Your reply does not follow the required format: {problem}. "
    "Reply again with only a JSON object that follows the schema."
)
_NAME = re.compile(r"[^A-Za-z0-9_-]+")
PROBLEM_CHARS = 300  # a problem quoting a long reply is cut to this many characters
_VALIDATORS: dict[str, Any] = {}  # by the schema's canonical text


def make_format(node: str, schema: dict[str, Any]) -> ReplyFormat:
    """The format of ``node``'s replies: named after it, strict when the schema allows it."""
    name = (_NAME.sub("_", node).strip("_") or "reply")[:52] + "_reply"
    return ReplyFormat(name=name, json_schema=schema, strict=_strict(schema))


def _strict(schema: Any) -> bool:
    """Whether OpenAI's strict mode takes ``schema``: each object requires every property
    it lists and allows no other (``additionalProperties: false``)."""
    if isinstance(schema, list):
        return all(_strict(item) for item in schema)
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required") or ()) != set(properties):
            return False
    return all(_strict(value) for key, value in schema.items() if key not in ("enum", "const"))


def reply_data(text: str) -> Any:
    """The JSON value of a reply's text; raises ValueError when it is not JSON."""
    return json.loads(text)


def reply_problem(reply_format: ReplyFormat, text: str) -> str | None:
    """What makes ``text`` fail ``reply_format``, in one line; None when it follows it."""
    try:
        data = reply_data(text)
    except ValueError as exc:
        shown = " ".join(text.split())[:60]
        return f"it is not JSON ({exc.args[0] if exc.args else exc}): {shown!r}"
    from jsonschema import exceptions  # loaded with the first format checked: see _validator

    error = exceptions.best_match(_validator(reply_format.json_schema).iter_errors(data))
    if error is None:
        return None
    where = ".".join(str(part) for part in error.absolute_path)
    problem = " ".join((f"at {where}: {error.message}" if where else error.message).split())
    return problem if len(problem) <= PROBLEM_CHARS else problem[: PROBLEM_CHARS - 1] + "…"


def _validator(schema: dict[str, Any]) -> Any:
    key = json.dumps(schema, sort_keys=True)
    found = _VALIDATORS.get(key)
    if found is None:
        # Imported here: jsonschema costs a tenth of a second at start-up, and most runs
        # check no reply format.
        from jsonschema import validators

        cls = validators.validator_for(schema)
        found = _VALIDATORS[key] = cls(schema)
    return found
