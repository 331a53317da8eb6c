"""A flow file is read as bounded YAML: its size, aliases, nesting, encoding and keys."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

import roost
from roost.errors import FlowError
from roost.flow import load_flow_text, read_flow, yamlread
from tests.flow.conftest import MINIMAL, load

if TYPE_CHECKING:
    from pathlib import Path


def test_utf8_bom_and_non_ascii_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + MINIMAL.replace("hello", "caf\u00e9 \u2615").encode())
    assert read_flow(path).name == "caf\u00e9 \u2615"


def test_merge_keys_share_settings_and_explicit_keys_win() -> None:
    flow = load(
        """\
        roost: 1
        name: merge
        providers:
          base: &base {kind: openai, model: gpt-4o-mini, temperature: 0.2}
          warm:
            <<: *base
            temperature: 1.0
        """
    )
    warm = flow.providers["warm"]
    assert warm.model == "gpt-4o-mini"
    assert warm.temperature == 1.0
    assert flow.locate("providers", "warm", "model") == (4, 30)


def test_yaml_keys_are_text_and_timestamps_stay_text() -> None:
    flow = load(
        """\
        roost: 1
        name: 2024-01-01
        vars: {1: one, yes: true}
        """
    )
    assert flow.name == "2024-01-01"
    assert flow.vars == {"1": "one", "yes": True}


def test_size_limit_is_enforced(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text(MINIMAL + "#" * (1 << 20), encoding="utf-8")
    with pytest.raises(FlowError, match="larger than"):
        read_flow(path)


def test_a_billion_laughs_fails_before_anything_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    built = [0]
    build_value = yamlread._Builder.value

    def counting(self: Any, node: Any, path: Any, depth: int) -> Any:
        built[0] += 1
        return build_value(self, node, path, depth)

    monkeypatch.setattr(yamlread._Builder, "value", counting)
    lines = ["roost: 1", "name: lol", "vars:", "  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 30):
        lines.append(f"  l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 8) + "]")
    with pytest.raises(FlowError, match="more than 50000 values after expanding aliases"):
        load_flow_text("\n".join(lines) + "\n", "lol.yaml", environ={})
    # Refused from the document's shape alone: not one value was built.
    assert built == [0]


def test_a_long_chain_of_aliases_is_refused_not_a_recursion_error() -> None:
    lines = ["roost: 1", "name: chain", "vars:", "  a0: &a0 x"]
    lines += [f"  a{i}: &a{i} [*a{i - 1}]" for i in range(1, 100)]
    with pytest.raises(FlowError, match="nesting deeper than 64 levels"):
        load_flow_text("\n".join(lines) + "\n", "chain.yaml", environ={})


def test_a_big_flow_without_aliases_is_not_taken_for_an_alias_bomb(tmp_path: Path) -> None:
    # 30,000 vars are 60,000 values written out: over the 50,000 allowed after expanding
    # aliases, yet nothing is expanded, so the file loads.
    entries = "\n".join(f"  k{i}: {i}" for i in range(30_000))
    path = tmp_path / "big.yaml"
    path.write_text(f"roost: 1\nvars:\n{entries}\n", encoding="utf-8")
    assert len(roost.load_flow(path).vars) == 30_000
