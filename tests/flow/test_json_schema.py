"""``roost schema``: the JSON Schema editors read, ``${NAME}`` allowed where values are typed."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from roost.cli.app import app


def test_schema_is_json_schema_for_editors() -> None:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "roost flow"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["roost"]
    for key in ("providers", "tools", "mcp_servers", "agents", "channels", "start", "defaults"):
        assert key in schema["properties"]
    start = schema["$defs"]["Start"]
    assert "from" in start["properties"]
    kinds = json.dumps(schema["$defs"])
    for kind in ("openai", "openai-responses", "anthropic", "scripted"):
        assert f'"{kind}"' in kinds


def test_schema_accepts_placeholders_where_numbers_and_booleans_go() -> None:
    import jsonschema
    import yaml

    schema = json.loads(CliRunner().invoke(app, ["schema"]).stdout)
    typed = "roost: 1\ndefaults: {max_rounds: '${ROUNDS:-2}', timestamps: '${STAMPS}'}\n"
    jsonschema.validate(yaml.safe_load(typed), schema)
    for wrong in ("{max_rounds: ten}", "{max_rounds: '${ROUNDS'}", "{timestamps: 'yes'}"):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(yaml.safe_load(f"roost: 1\ndefaults: {wrong}\n"), schema)
