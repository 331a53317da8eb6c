"""A flow's text with some of its values replaced: a run's own ``vars``, scripted providers.

A batch row or a flow test runs a flow with other values than its file has (a
row's ``vars``, a test's scripted replies for a provider). The run must record
what it ran, so that ``roost replay`` and ``roost show`` see the same flow: the
new values are written into the flow's *text*, which is then loaded as any flow
is. Each value is replaced where it stands, written in YAML's flow style on one
line followed by as many line breaks as it took before, so every other line of
the file keeps its number and a problem found later is located as in the file.
Placeholders such as ``${OPENAI_API_KEY}`` stay unexpanded where nothing
replaced them; in a replaced provider they are gone, so a test that scripts a
provider needs none of its secrets.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yaml.nodes import MappingNode, Node, ScalarNode

from roost.flow.yamlread import compose, fail

if TYPE_CHECKING:
    from roost.flow.models import Flow


@dataclass(frozen=True, slots=True)
class _Splice:
    start: int  # character offsets in the text
    end: int
    text: str


def flow_text_with(
    text: str,
    file: str,
    *,
    variables: Mapping[str, Any] | None = None,
    providers: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """``text`` with ``vars.NAME`` set to ``variables[NAME]`` and provider entries replaced.

    Every name given must already be in the flow (a var under ``vars:``, a
    provider under ``providers:``); a name that is not raises a located
    FlowError at the mapping that lacks it. YAML errors in ``text`` are raised
    as the loader raises them.
    """
    if not variables and not providers:
        return text
    root = compose(text, file).root
    if not isinstance(root, MappingNode):
        raise fail(file, 1, 1, "a flow must be a mapping of keys (roost:, name:, ...)")
    splices = [
        *_replaced(text, root, "vars", variables or {}, file, "var"),
        *_replaced(text, root, "providers", providers or {}, file, "provider"),
    ]
    for splice in sorted(splices, key=lambda s: s.start, reverse=True):
        text = text[: splice.start] + splice.text + text[splice.end :]
    return text


def with_vars(flow: Flow, variables: Mapping[str, Any]) -> Flow:
    """``flow`` with some of its ``vars`` set, its text saying so; checked without a reload.

    Only values of vars the flow declares change, and a var may hold any value,
    so what validation found stays true: the copy keeps the flow's checks and
    positions, and only its text (what a run records) and ``vars`` are new. A
    name the flow does not declare is a FlowError, as in ``flow_text_with``.
    """
    if not variables:
        return flow
    text = flow_text_with(flow.text, flow.path, variables=variables)
    copy = flow.model_copy(update={"vars": {**flow.vars, **variables}})
    copy._text = text
    return copy


def _replaced(
    text: str, root: MappingNode, section: str, values: Mapping[str, Any], file: str, what: str
) -> list[_Splice]:
    """The splices that set each of ``values`` in the mapping ``root[section]``."""
    if not values:
        return []
    entries = _entry(root, section)
    if entries is None or not isinstance(entries[1], MappingNode):
        line, col = _mark(entries[0] if entries else root)
        name = next(iter(values))
        raise fail(file, line, col, f"the flow has no {what} {name!r} (no {section}: mapping)")
    splices = []
    for name, value in values.items():
        found = _entry(entries[1], name)
        if found is None:
            line, col = _mark(entries[0])
            known = ", ".join(_names(entries[1])) or "none"
            raise fail(file, line, col, f"the flow has no {what} {name!r} ({section}: {known})")
        splices.append(_value_splice(text, found, value, file))
    return splices


def _value_splice(text: str, entry: tuple[Node, Node], value: Any, file: str) -> _Splice:
    """Replaces the text from the end of ``entry``'s key to the end of its value.

    The colon and what follows it are rewritten as ``: VALUE`` on the key's own
    line, so a value that began on the next line needs no indentation rule; the
    line breaks the old value spanned follow it, keeping later lines in place.
    """
    key, node = entry
    start, end = key.end_mark.index, node.end_mark.index
    if node.start_mark.index < start:  # an alias: the node stands at its anchor
        line, col = _mark(key)
        raise fail(file, line, col, f"cannot replace {_key_text(key)!r}: its value is an alias")
    replaced = text[start:end]
    last_break = replaced.rfind("\n")
    if last_break >= 0 and not replaced[last_break + 1 :].strip():
        # A block value ends where the next key begins: that key's indentation stays.
        end = start + last_break + 1
        replaced = replaced[: last_break + 1]
    return _Splice(start, end, ": " + inline_yaml(value) + "\n" * replaced.count("\n"))


def inline_yaml(value: Any) -> str:
    """``value`` as YAML in flow style on one line, read back as the same value.

    Strings are double-quoted with escapes, so that no line break, quote or
    character that YAML treats specially can end them early; a float always has
    its decimal point (YAML 1.1 reads ``1e+20`` as text).
    """
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _ESCAPED.sub(_escape, json.dumps(value, ensure_ascii=False))
    if isinstance(value, Mapping):
        pairs = (f"{inline_yaml(str(key))}: {inline_yaml(item)}" for key, item in value.items())
        return "{" + ", ".join(pairs) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(inline_yaml(item) for item in value) + "]"
    raise TypeError(f"cannot write a {type(value).__name__} as a flow's value")


# What a double-quoted YAML string may not hold as it is: line breaks that YAML
# counts as such (NEL, LS, PS) and what PyYAML's reader refuses.
_ESCAPED = re.compile("[^\x09\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _float(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return f"{mantissa}e{exponent}" if exponent else mantissa


def _entry(mapping: MappingNode, key: str) -> tuple[Node, Node] | None:
    for key_node, value_node in mapping.value:
        if isinstance(key_node, ScalarNode) and key_node.value == key:
            return key_node, value_node
    return None


def _names(mapping: MappingNode) -> list[str]:
    return [k.value for k, _ in mapping.value if isinstance(k, ScalarNode)]


def _mark(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _key_text(node: Node) -> str:
    return str(node.value) if isinstance(node, ScalarNode) else "?"
