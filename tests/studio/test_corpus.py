"""Every kind of edit on every flow of the corpus: only the lines it changes change."""

from __future__ import annotations

import difflib
import functools
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from roost.studio.roundtrip import as_json, edit_text, read_json

CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.yaml"))
KINDS = [
    "add_key",
    "add_nested",
    "replace",
    "remove_node",
    "remove_key",
    "list_append",
    "list_insert",
    "list_remove",
    "list_replace",
    "move",
    "copy",
    "add_top",
]


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 30


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_every_kind_of_edit_changes_only_its_lines(path: Path) -> None:
    text, tree, flow = _read(path)
    for kind in KINDS:
        ops, touched = _ops(kind, flow)
        edited = edit_text(text, ops)
        assert read_json(edited) == jsonpatch.apply_patch(flow, ops), kind
        removed, added = _changed(text, edited)
        allowed = set().union(*(_lines(tree, pointer, text) for pointer in touched))
        assert removed <= allowed, f"{kind}:\n{_diff(text, edited)}"
        copies = sum(len(_aliases(tree, _at(tree, _parts(p)), [])) for p in touched)
        assert added <= _most_added(kind) + 3 * copies, f"{kind}:\n{_diff(text, edited)}"


@functools.cache
def _read(path: Path) -> tuple[str, Any, Any]:
    """A corpus file's text, its round-trip tree (never changed) and its JSON form."""
    text = path.read_text()
    tree = YAML(typ="rt").load(text)
    return text, tree, as_json(tree)


def _ops(kind: str, flow: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The operations of ``kind`` on this flow and the places whose lines they may touch."""
    names = list(flow["agents"])
    first, last = f"/agents/{names[0]}", f"/agents/{names[-1]}"
    listed = _first_list(flow, "")
    table: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
        "add_key": ([{"op": "add", "path": f"{first}/note", "value": "Added."}], [f"+{first}"]),
        "add_nested": (
            [{"op": "add", "path": f"{first}/caps", "value": {"turns": 2, "tools": [1, 2]}}],
            [f"+{first}"],
        ),
        "replace": (
            [{"op": "replace", "path": f"{first}/role", "value": "New."}],
            [f"{first}/role"],
        ),
        "remove_node": ([{"op": "remove", "path": last}], [last]),
        "remove_key": ([{"op": "remove", "path": "/start/to"}], ["/start/to"]),
        "list_append": ([{"op": "add", "path": f"{listed}/-", "value": "z"}], [f"+{listed}"]),
        "list_insert": ([{"op": "add", "path": f"{listed}/0", "value": "a"}], [f"+{listed}"]),
        "list_remove": ([{"op": "remove", "path": f"{listed}/0"}], [f"{listed}/0", f"+{listed}"]),
        "list_replace": (
            [{"op": "replace", "path": f"{listed}/0", "value": "b"}],
            [f"{listed}/0", f"+{listed}"],
        ),
        "move": (
            [{"op": "move", "from": f"{first}/role", "path": f"{first}/instructions"}],
            [f"{first}/role", f"+{first}"],
        ),
        "copy": ([{"op": "copy", "from": first, "path": f"{first}_copy"}], ["+/agents"]),
        "add_top": ([{"op": "add", "path": "/summary", "value": "A flow."}], ["+"]),
    }
    return table[kind]


def _first_list(value: Any, pointer: str) -> str:
    if isinstance(value, list) and value:
        return pointer
    items = value.items() if isinstance(value, dict) else []
    for key, item in items:
        found = _first_list(item, f"{pointer}/{key}")
        if found:
            return found
    return ""


def _lines(tree: Any, pointer: str, text: str) -> set[int]:
    """The lines (from 0) an edit at ``pointer`` may change: a node's own lines, those of
    its aliases, and for ``+POINTER`` (something added inside) a flow-style node's lines."""
    lines = text.splitlines()
    adding = pointer.startswith("+")
    parts = _parts(pointer)
    flowing = _outer_flow(tree, parts)
    found: set[int] = set()
    if flowing is not None:  # ruamel writes a changed flow collection again on one line
        found = _span(tree, parts[:flowing], lines)
    elif not adding:
        found = _span(tree, parts, lines)
    for other in _aliases(tree, _at(tree, parts), []):
        found |= _span(tree, other, lines)
    return found


def _outer_flow(tree: Any, parts: list[str]) -> int | None:
    """How many parts lead to the outermost flow-style collection on the way, if any."""
    node = tree
    for depth in range(len(parts) + 1):
        if isinstance(node, (CommentedMap, CommentedSeq)) and node.fa.flow_style():
            return depth
        if depth < len(parts):
            part = parts[depth]
            node = node[int(part)] if isinstance(node, list) else node.get(part)
    return None


def _at(tree: Any, parts: list[str]) -> Any:
    for part in parts:
        tree = tree[int(part)] if isinstance(tree, list) else tree[part]
    return tree


def _span(tree: Any, parts: list[Any], lines: list[str]) -> set[int]:
    if not parts:
        return set(range(len(lines)))
    parent = _at(tree, parts[:-1])
    keys = list(range(len(parent))) if isinstance(parent, list) else list(parent)
    key = int(parts[-1]) if isinstance(parent, list) else parts[-1]
    where = parent.lc.item if isinstance(parent, list) else parent.lc.key
    start = where(key)[0]
    at = keys.index(key)
    if at + 1 < len(keys):
        end = where(keys[at + 1])[0]
    else:
        outer = _span(tree, parts[:-1], lines)
        end = max(outer) + 1 if outer else start + 1
    while end - 1 > start and (not lines[end - 1].strip() or lines[end - 1].lstrip()[0] == "#"):
        end -= 1
    while end < len(lines) and not lines[end].strip():  # the blank lines right after it
        end += 1
    return set(range(start, max(end, start + 1)))


def _aliases(tree: Any, node: Any, parts: list[Any]) -> list[list[Any]]:
    """Other places the same anchored node is read at."""
    found: list[list[Any]] = []
    items = (
        enumerate(tree)
        if isinstance(tree, list)
        else tree.items()
        if isinstance(tree, dict)
        else []
    )
    for key, value in items:
        here = [*parts, key]
        if value is node and getattr(getattr(value, "anchor", None), "value", None):
            found.append(here)
        if isinstance(value, (dict, list)):
            found += _aliases(value, node, here)
    return found


def _parts(pointer: str) -> list[str]:
    return pointer.lstrip("+").split("/")[1:]


def _most_added(kind: str) -> int:
    return {"add_nested": 5, "copy": 12, "remove_node": 1, "remove_key": 1}.get(kind, 2)


def _changed(before: str, after: str) -> tuple[set[int], int]:
    """The original's lines the edit changed, and how many lines it wrote in their place."""
    old, new = before.splitlines(), after.splitlines()
    removed, added = _diffed(old, new)
    if len(old) == len(new):  # line for line may say less: a diff may pair lines otherwise
        in_place = {i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b}
        return min((in_place, 0), (removed, added), key=lambda found: len(found[0]))
    return removed, added


def _diffed(old: list[str], new: list[str]) -> tuple[set[int], int]:
    removed: set[int] = set()
    added = 0
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed.update(range(i1, i2))
            added += j2 - j1
    return removed, added


def _diff(before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=1))
