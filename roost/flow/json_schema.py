"""The JSON Schema of a flow file, for editors: generated from the models.

A value that is only a ``${NAME}`` placeholder takes the type of what it
expands to when the flow is loaded, so ``max_rounds: ${ROUNDS:-5}`` is a
valid count although it is written as text. The schema says so: wherever a
number or a boolean is expected, such a placeholder is accepted as well.
"""

from __future__ import annotations

from typing import Any

from roost.flow.models import Flow

SCHEMA_ID = "https://json-schema.org/draft/2020-12/schema"
PLACEHOLDER = {
    "type": "string",
    "pattern": r"^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$",
    "description": "An environment variable (${NAME} or ${NAME:-default}) holding the value.",
}
_TYPED = ("integer", "number", "boolean")


def flow_schema() -> dict[str, Any]:
    """The JSON Schema of a flow file."""
    schema = _with_placeholders(Flow.model_json_schema(by_alias=True, mode="validation"))
    return {
        "$schema": SCHEMA_ID,
        "title": "roost flow",
        "description": "A roost flow file: agents, channels, providers and tools (format 1).",
        **{k: v for k, v in schema.items() if k not in ("title", "description")},
        "$defs": {**schema.get("$defs", {}), "Placeholder": PLACEHOLDER},
    }


def _with_placeholders(node: Any) -> Any:
    """``node`` with every number or boolean schema also accepting a placeholder."""
    if isinstance(node, list):
        return [_with_placeholders(item) for item in node]
    if not isinstance(node, dict):
        return node
    walked = {key: _with_placeholders(value) for key, value in node.items()}
    if walked.get("type") in _TYPED:
        kept = {k: v for k, v in walked.items() if k not in ("title", "description", "default")}
        wrapped = {k: v for k, v in walked.items() if k in ("title", "description", "default")}
        return {**wrapped, "anyOf": [kept, {"$ref": "#/$defs/Placeholder"}]}
    return walked
