"""Edits of a flow written back into its author's YAML: only the changed lines change.

The flow's JSON form is the YAML's own structure (placeholders unexpanded,
aliases read as the values they name). An edit is a JSON Patch (RFC 6902, the
``jsonpatch`` library) on that form. ruamel.yaml's round-trip mode carries the
file's comments, quotes, flow and block styles and anchors through the change;
then only the lines its dump changed are put into the original text (a
three-way line merge with ``difflib``, ``roost.studio._linemerge``), so that
every line the edit did not reach stays byte for byte as the author wrote it.
"""

from __future__ import annotations

import io
import re
from difflib import SequenceMatcher
from typing import Any

import jsonpatch
import jsonpointer
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.tokens import CommentToken

from roost.errors import RoostError
from roost.studio._linemerge import merge_lines


class EditError(RoostError):
    """An edit that cannot apply to the flow (a path that is not there, a failed test)."""


class NotYaml(RoostError):
    """A file whose text is not YAML a mapping can be read from."""


_SEQ_DASH = re.compile(
    r"^(?P<key> *)[^\s#-][^:#\n]*: *(&\S+ *)?(#.*)?\n(?: *(#.*)?\n)*(?P<dash> *)- ", re.MULTILINE
)


def edit_text(text: str, ops: list[dict[str, Any]]) -> str:
    """``text`` with the JSON Patch ``ops`` applied, every untouched line kept as it is."""
    yaml = _yaml(text)
    tree = _load(yaml, text)
    before = _dump(yaml, tree)
    wanted = apply_ops(as_json(tree), ops, tree)
    if not isinstance(wanted, dict):
        raise EditError("the edited flow is not a mapping of keys, as a flow file is")
    sync(tree, wanted)
    after = _dump(yaml, tree)
    merged = merge_lines(text, before, after)
    # The merge is checked against what was meant: should it ever read otherwise,
    # ruamel's own whole dump (comments kept, some lines reflowed) is written instead.
    return merged if _reads_as(yaml, merged, wanted) else after


def as_json(tree: Any) -> Any:
    """The YAML's structure as plain JSON values (mappings, lists, scalars)."""
    if isinstance(tree, dict):
        return {str(key): as_json(value) for key, value in tree.items()}
    if isinstance(tree, list):
        return [as_json(item) for item in tree]
    if tree is None:
        return None
    for kind in (bool, str, int, float):  # ruamel's own subclasses, as the plain types
        if isinstance(tree, kind):
            return kind(tree)
    return str(tree)  # a date or another tagged scalar: its text


def read_json(text: str) -> Any:
    """The JSON form of a flow's text (NotYaml when it is not YAML)."""
    return as_json(_load(_yaml(text), text))


def new_text(flow: dict[str, Any]) -> str:
    """The YAML text of a new flow file written from its JSON form."""
    yaml = _yaml("")
    return _dump(yaml, _plain_to_tree(flow))


def apply_ops(document: Any, ops: list[dict[str, Any]], tree: Any = None) -> Any:
    """``document`` with the JSON Patch applied (EditError naming the op that fails).

    A ``move`` between two keys of one mapping is a rename: the key keeps its place
    there (and in ``tree``, the ruamel nodes, its value's style and comments), where
    RFC 6902's remove-then-add would put it last.
    """
    for index, op in enumerate(ops):
        try:
            renamed = _renamed(document, op)
            if renamed is not None:
                document = renamed
                _rename_node(tree, op)
                continue
            document = jsonpatch.JsonPatch([op]).apply(document, in_place=False)
        except (
            jsonpatch.JsonPatchException,
            jsonpointer.JsonPointerException,
            KeyError,
            IndexError,
            TypeError,
            ValueError,
        ) as error:
            raise EditError(f"ops[{index}] ({_describe(op)}): {error}") from error
    return document


def _sibling_keys(op: Any) -> tuple[list[str], str, str] | None:
    """(the parent's path, the old key, the new key) of a move between siblings."""
    if not isinstance(op, dict) or op.get("op") != "move":
        return None
    source = jsonpointer.JsonPointer(op.get("from", "")).parts
    target = jsonpointer.JsonPointer(op.get("path", "")).parts
    if not source or len(source) != len(target) or source[:-1] != target[:-1]:
        return None
    return source[:-1], source[-1], target[-1]


def _renamed(document: Any, op: Any) -> Any:
    """``document`` with a key renamed in its place, or None when ``op`` is no rename."""
    keys = _sibling_keys(op)
    if keys is None:
        return None
    parent_path, old, new = keys
    copy = copy_json(document)
    parent = jsonpointer.JsonPointer.from_parts(parent_path).resolve(copy)
    if not isinstance(parent, dict) or old not in parent or new in parent:
        return None  # jsonpatch says what is wrong, or replaces the value at ``new``
    items = [(new if key == old else key, value) for key, value in parent.items()]
    parent.clear()
    parent.update(items)
    return copy


def _rename_node(tree: Any, op: Any) -> None:
    keys = _sibling_keys(op)
    if tree is None or keys is None:
        return
    parent_path, old, new = keys
    node = tree
    for part in parent_path:
        found = {str(key): key for key in node} if isinstance(node, CommentedMap) else {}
        if part not in found:
            return  # a place the tree does not have yet: the sync writes it anew
        node = node[found[part]]
    names = {str(key): key for key in node} if isinstance(node, CommentedMap) else {}
    if old not in names or new in names:
        return
    key = names[old]
    at = list(node).index(key)
    value = node[key]
    comment = node.ca.items.pop(key, None)
    del node[key]
    node.insert(at, new, value)
    if comment is not None:
        node.ca.items[new] = comment


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (mappings and lists copied, scalars shared)."""
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    return value


def sync(tree: Any, wanted: Any) -> Any:
    """``tree`` changed in place into ``wanted``, keeping what stays (returns the new node)."""
    _keep_anchors(tree)
    return _sync(tree, wanted, set())


def _keep_anchors(node: Any) -> None:
    """Every anchor the author wrote stays, even once nothing refers to it."""
    anchor: Any = getattr(node, "anchor", None)
    if anchor is not None and anchor.value:
        anchor.always_dump = True
    if isinstance(node, dict):
        for value in node.values():
            _keep_anchors(value)
    elif isinstance(node, list):
        for item in node:
            _keep_anchors(item)


def _sync(node: Any, wanted: Any, seen: set[int]) -> Any:
    if as_json(node) == wanted:
        return node
    if isinstance(node, (CommentedMap, CommentedSeq)) and id(node) in seen:
        # An alias that no longer reads as its anchor: a copy, in the anchor's style.
        return _plain_to_tree(wanted, flow=_flow_style(node))
    if isinstance(node, CommentedMap) and isinstance(wanted, dict):
        seen.add(id(node))
        _sync_map(node, wanted, seen)
        return node
    if isinstance(node, CommentedSeq) and isinstance(wanted, list):
        seen.add(id(node))
        _sync_seq(node, wanted, seen)
        return node
    # A string put in a string's place keeps its quotes: ruamel's own assignment sees to it.
    return _plain_to_tree(wanted)


def _sync_map(node: CommentedMap, wanted: dict[str, Any], seen: set[int]) -> None:
    keys = {str(key): key for key in node}
    tail = _take_tail(node, next(reversed(node))) if len(node) else None
    for name, key in keys.items():
        if name not in wanted:
            _drop(node, key, list(node))
    kept = [name for name in wanted if name in keys]
    if kept != [name for name in keys if name in wanted]:
        _reorder(node, [keys[name] for name in kept])
    for name in kept:
        key = keys[name]
        old = node[key]
        node[key] = _sync(old, wanted[name], seen)
        _keep_comment_gap(node, key, old)
    for name, value in wanted.items():
        if name not in keys:
            node[name] = _plain_to_tree(value, flow=_flow_style(node))
    if tail is not None and len(node):
        _give_tail(node, next(reversed(node)), tail)


def _sync_seq(node: CommentedSeq, wanted: list[Any], seen: set[int]) -> None:
    old = [as_json(item) for item in node]
    tail = _take_tail(node, len(node) - 1) if len(node) else None
    matcher = SequenceMatcher(None, [_key(v) for v in old], [_key(v) for v in wanted])
    # From the end, so that the earlier indexes stay true while items come and go.
    for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for offset in range(i2 - i1):
                node[i1 + offset] = _sync(node[i1 + offset], wanted[j1 + offset], seen)
            continue
        for index in reversed(range(i1, i2)):
            _drop(node, index, list(range(len(node))))
        for offset, value in enumerate(wanted[j1:j2]):
            node.insert(i1 + offset, _plain_to_tree(value, flow=_flow_style(node)))
    if tail is not None and len(node):
        _give_tail(node, len(node) - 1, tail)


def _keep_comment_gap(node: CommentedMap, key: Any, old: Any) -> None:
    """A scalar grown or shrunk on its line keeps the spaces before its end-of-line comment."""
    new = node[key]
    entry = node.ca.items.get(key)
    token = entry[2] if entry and len(entry) > 2 else None
    scalar = (str, int, float)
    if new is old or not isinstance(token, CommentToken) or not token.value.startswith("#"):
        return
    if isinstance(new, scalar) and isinstance(old, scalar) and "\n" not in str(old) + str(new):
        token.column = max(0, token.column + len(str(new)) - len(str(old)))


def _key(value: Any) -> str:
    return repr(value)


def _plain_to_tree(value: Any, *, flow: bool = False) -> Any:
    """A new value as ruamel nodes: in flow style inside a flow-style collection."""
    if isinstance(value, dict):
        mapping = CommentedMap(
            (key, _plain_to_tree(item, flow=flow)) for key, item in value.items()
        )
        if flow:
            mapping.fa.set_flow_style()
        return mapping
    if isinstance(value, list):
        sequence = CommentedSeq(_plain_to_tree(item, flow=flow) for item in value)
        if flow:
            sequence.fa.set_flow_style()
        return sequence
    return value


def _flow_style(node: CommentedMap | CommentedSeq) -> bool:
    return bool(node.fa.flow_style())


# ruamel keeps what follows an item (its end-of-line comment, then the blank lines
# and comments before the next one) on that item. When the last item goes or a new
# one follows it, that tail moves, so that it stays before whatever came next.


def _drop(node: Any, key: Any, keys: list[Any]) -> None:
    """Removes an item; the lines kept after it go to the item before it."""
    at = keys.index(key)
    tail = _take_tail(node, key)
    del node[key]
    if isinstance(node, CommentedMap):
        node.ca.items.pop(key, None)
    if tail is not None and at > 0:
        _give_tail(node, keys[at - 1], tail)


def _reorder(node: CommentedMap, order: list[Any]) -> None:
    values = [(key, node[key]) for key in order]
    for key, _ in values:
        del node[key]
    for key, value in values:
        node[key] = value


def _owner(node: Any, key: Any) -> tuple[Any, Any]:
    """Where the tail after ``node[key]`` is kept: the deepest last item of its value."""
    value = node[key]
    while isinstance(value, (CommentedMap, CommentedSeq)) and len(value) and not _flow_style(value):
        node, key = value, (next(reversed(value)) if isinstance(value, dict) else len(value) - 1)
        value = node[key]
    return node, key


def _take_tail(node: Any, key: Any) -> str | None:
    """The lines kept after an item (past its end-of-line comment), taken off it."""
    owner, at = _owner(node, key)
    entry = owner.ca.items.get(at)
    index = 2 if isinstance(owner, dict) else 0
    token = entry[index] if entry and len(entry) > index else None
    if not isinstance(token, CommentToken):
        return None
    text = token.value
    head, newline, rest = text.partition("\n")
    if not head.strip().startswith("#"):
        head, rest = "", text[1:] if text.startswith("\n") else text
    if not rest:
        return None
    if head:
        token.value = head + newline
    else:
        entry[index] = None
    return rest


def _give_tail(node: Any, key: Any, tail: str) -> None:
    owner, at = _owner(node, key)
    index = 2 if isinstance(owner, dict) else 0
    entry = owner.ca.items.setdefault(at, [None, None, None, None])
    token = entry[index]
    if isinstance(token, CommentToken):
        token.value += tail if token.value.endswith("\n") else "\n" + tail
    else:
        entry[index] = CommentToken("\n" + tail, _mark(), None)


def _mark() -> Any:
    from ruamel.yaml.error import CommentMark

    return CommentMark(0)


def _describe(op: Any) -> str:
    if isinstance(op, dict):
        return f"{op.get('op', '?')} {op.get('path', '?')}"
    return "not an operation"


def _yaml(text: str) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long line the author wrote on one
    mapping, sequence, offset = _indents(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    return yaml


def _indents(text: str) -> tuple[int, int, int]:
    """The author's indents: of a mapping, of a list's items and of their dashes."""
    mapping = 2
    for line, following in zip(text.splitlines(), text.splitlines()[1:], strict=False):
        if line.rstrip().endswith(":") and not line.lstrip().startswith(("#", "-")):
            depth = len(following) - len(following.lstrip())
            outer = len(line) - len(line.lstrip())
            if following.strip() and not following.lstrip().startswith("-") and depth > outer:
                mapping = depth - outer
                break
    found = _SEQ_DASH.search(text)
    if found is None:
        return mapping, mapping, 0
    offset = max(0, len(found["dash"]) - len(found["key"]))
    return mapping, offset + 2, offset


def _load(yaml: YAML, text: str) -> Any:
    try:
        tree = yaml.load(text)
    except YAMLError as error:
        raise NotYaml(f"the file is not YAML: {' '.join(str(error).split())}") from error
    if tree is None:
        tree = CommentedMap()
    if not isinstance(tree, CommentedMap):
        raise NotYaml("the file is not a YAML mapping")
    return tree


def _dump(yaml: YAML, tree: Any) -> str:
    stream = io.StringIO()
    yaml.dump(tree, stream)
    return stream.getvalue()


def _reads_as(yaml: YAML, text: str, wanted: Any) -> bool:
    try:
        return bool(as_json(_load(yaml, text)) == wanted)
    except NotYaml:
        return False


def places(text: str) -> list[tuple[int, int, str]]:
    """Where each key and item of the YAML starts: (line, column), 1-based, and its pointer.

    The page shows a problem at the field its line and column fall in: the last
    place that starts at or before it. Empty when the text is not YAML.
    """
    try:
        tree = _load(_yaml(text), text)
    except NotYaml:
        return []
    found: list[tuple[int, int, str]] = []
    _places(tree, "", found)
    return sorted(found)


def _places(node: Any, path: str, found: list[tuple[int, int, str]]) -> None:
    if isinstance(node, CommentedMap):
        for key, value in node.items():
            where = f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"
            line, column = node.lc.key(key)
            found.append((line + 1, column + 1, where))
            _places(value, where, found)
    elif isinstance(node, CommentedSeq):
        for index, item in enumerate(node):
            line, column = node.lc.item(index)
            found.append((line + 1, column + 1, f"{path}/{index}"))
            _places(item, f"{path}/{index}", found)


def place_of(found: list[tuple[int, int, str]], line: int, column: int) -> str | None:
    """The pointer of the last place starting at or before (line, column), if any."""
    before = [place for place in found if (place[0], place[1]) <= (line, column)]
    return before[-1][2] if before else None
