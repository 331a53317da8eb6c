"""Reading a flow file safely: bytes to text, text to plain data with positions.

libyaml (through PyYAML) only *parses* here; ``_Composer`` makes nodes of its
events and roost builds the Python values itself, so that no tag can construct
an object, duplicate keys are caught, alias expansion is counted (a "billion
laughs" file stops after ``MAX_NODES`` values) and every key and value keeps
its line and column. A syntax error is told in plain words (``syntax_error``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

import yaml
from yaml._yaml import CParser
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from roost.errors import FlowError, Problem
from roost.flow.positions import Path, Positions
from roost.flow.yamlerrors import one_line, syntax_error

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_BYTES = 1 << 20  # 1 MiB: a flow is hand-written; anything larger is a mistake
MAX_NODES = 50_000  # values built after alias expansion
MAX_DEPTH = 64

_YAML = "tag:yaml.org,2002:"
_SCALAR_TAGS = {f"{_YAML}{name}" for name in ("str", "int", "float", "bool", "null", "timestamp")}


def fail(file: str, line: int, col: int, message: str) -> FlowError:
    """A FlowError holding one located problem."""
    return FlowError([Problem(file, line, col, message)])


def read_source(path: str | os.PathLike[str]) -> str:
    """The text of a flow file, or a FlowError for a missing, odd, huge or non-UTF-8 file."""
    file = os.fspath(path)
    target = FsPath(file)
    try:
        if target.is_dir():
            raise fail(file, 1, 1, "is a directory, not a flow file")
        if not target.exists():
            raise fail(file, 1, 1, "no such file")
        if not target.is_file():
            raise fail(file, 1, 1, "not a regular file")
        with target.open("rb") as stream:
            data = stream.read(MAX_BYTES + 1)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise fail(file, 1, 1, f"cannot read the file: {reason}") from error
    return decode_source(data, file)


def decode_source(data: bytes, file: str) -> str:
    """Decodes UTF-8 (a leading BOM is dropped); binary data and bad bytes are located errors."""
    if len(data) > MAX_BYTES:
        raise fail(
            file, 1, 1, f"file is larger than {MAX_BYTES // 1024} KiB; a flow must be smaller"
        )
    nul = data.find(b"\0")
    if nul >= 0:
        line, col = _byte_mark(data, nul)
        raise fail(file, line, col, "binary file (NUL byte): a flow is UTF-8 text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line, col = _byte_mark(data, error.start)
        bad = data[error.start]
        raise fail(file, line, col, f"invalid UTF-8 (byte 0x{bad:02x})") from None


def _byte_mark(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    prefix = data[line_start:offset].decode("utf-8", errors="replace")
    return data.count(b"\n", 0, offset) + 1, len(prefix) + 1


# What PyYAML's reader refuses: control characters and the like.
_NOT_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
_OPENS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSES = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def compose(text: str, file: str) -> Composed:
    """The single YAML document of ``text`` as a node tree, or a located FlowError.

    libyaml parses (a megabyte takes a fraction of a second, where PyYAML's
    Python parser takes seconds) and ``_Composer`` turns its events into nodes.
    """
    if len(text) > MAX_BYTES:
        raise fail(
            file, 1, 1, f"file is larger than {MAX_BYTES // 1024} KiB; a flow must be smaller"
        )
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise fail(file, line, 1, "binary file (NUL byte): a flow is UTF-8 text")
    odd = _NOT_PRINTABLE.search(text)
    if odd is not None:
        at = odd.start()
        line, col = text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1
        raise fail(file, line, col, f"character U+{ord(odd.group()):04X} is not allowed in YAML")
    composer = _Composer(text, file)
    try:
        node = composer.document()
    except yaml.MarkedYAMLError as error:
        raise fail(file, *syntax_error(error, text)) from None
    except yaml.YAMLError as error:  # any other error of the parser has no position
        raise fail(file, 1, 1, f"invalid YAML: {one_line(str(error))}") from None
    if node is None:
        raise fail(file, 1, 1, "empty file: a flow needs at least 'roost: 1'")
    return Composed(node, composer.written, composer.aliases)


@dataclass(frozen=True, slots=True)
class Composed:
    """A document's root node, the nodes written in it, and whether aliases repeat some."""

    root: Node
    written: int
    aliases: bool


class _Composer:
    """PyYAML's composer over libyaml's events, without recursion, nesting bounded.

    Builds the same ``yaml.nodes`` tree as ``yaml.compose`` (tags resolved the
    same way, an alias being the very node of its anchor), refuses a second
    document, nesting deeper than ``MAX_DEPTH`` and an alias inside its own
    anchor, and counts the nodes written and whether any alias repeats one.
    """

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self._resolve: Callable[[type[Node], str | None, Any], str] = Resolver().resolve  # type: ignore[no-untyped-call]
        self.anchors: dict[str, Node] = {}
        self.open: set[int] = set()  # ids of the anchored collections being composed
        self.written = 0  # nodes written in the text (an alias is none)
        self.aliases = False

    def document(self) -> Node | None:
        parser = CParser(self.text)
        try:
            return self._document(parser)
        finally:
            parser.dispose()

    def _document(self, parser: CParser) -> Node | None:
        root: Node | None = None
        documents = 0
        stack: list[Node] = []
        keys: list[Node | None] = []  # a mapping's key waiting for its value, per level
        while True:
            event: Any = parser.get_event()
            kind = type(event)
            if kind is yaml.ScalarEvent:  # the commonest event, made a node inline
                tag = event.tag
                if tag is None or tag == "!":
                    tag = self._resolve(ScalarNode, event.value, event.implicit)
                node: Node = ScalarNode(
                    tag, event.value, event.start_mark, event.end_mark, style=event.style
                )
                self.written += 1
                if event.anchor is not None:
                    self._anchor(event, node)
            elif kind in _OPENS:
                stack.append(self._collection(event, depth=len(stack)))
                keys.append(None)
                continue
            elif kind in _CLOSES:
                node = stack.pop()
                keys.pop()
                node.end_mark = event.end_mark
                self.open.discard(id(node))
            elif kind is yaml.AliasEvent:
                node = self._alias(event)
                self.aliases = True
            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise self._several_documents(event)
                continue
            elif kind is yaml.StreamEndEvent:
                return root
            else:  # stream start, document end
                continue
            if not stack:
                root = node
            elif isinstance(stack[-1], SequenceNode):
                stack[-1].value.append(node)
            elif keys[-1] is None:
                keys[-1] = node
            else:
                stack[-1].value.append((keys[-1], node))
                keys[-1] = None

    def _several_documents(self, event: Any) -> FlowError:
        message = "several YAML documents in one file; a flow is one document"
        return fail(self.file, *_event_mark(event), message)

    def _collection(self, event: Any, depth: int) -> Node:
        """The empty node a collection's start event opens, ``depth`` levels down."""
        if depth >= MAX_DEPTH:
            raise fail(self.file, *_event_mark(event), f"nesting deeper than {MAX_DEPTH} levels")
        mapping = type(event) is yaml.MappingStartEvent
        cls = MappingNode if mapping else SequenceNode
        tag = event.tag
        if tag is None or tag == "!":
            tag = self._resolve(cls, None, event.implicit)
        node = cls(tag, [], event.start_mark, None, flow_style=event.flow_style)
        self.written += 1
        if event.anchor is not None:
            self.open.add(id(node))  # only an anchored node can be named inside itself
            self._anchor(event, node)
        return node

    def _anchor(self, event: Any, node: Node) -> None:
        anchor = event.anchor
        first = self.anchors.get(anchor)
        if first is not None:
            line = first.start_mark.line + 1
            raise fail(
                self.file,
                *_event_mark(event),
                f"invalid YAML: the anchor '&{anchor}' is defined twice (first at line {line})",
            )
        self.anchors[anchor] = node

    def _alias(self, event: Any) -> Node:
        node = self.anchors.get(event.anchor)
        if node is None:
            raise fail(
                self.file,
                *_event_mark(event),
                f"invalid YAML: '*{event.anchor}' names no anchor "
                f"'&{event.anchor}' written before it",
            )
        if id(node) in self.open:
            raise fail(
                self.file, *_mark(node), "an alias refers to its own anchor (a recursive value)"
            )
        return node


def _event_mark(event: Any) -> tuple[int, int]:
    mark = event.start_mark
    return mark.line + 1, mark.column + 1


@dataclass(slots=True)
class Built:
    """A document as plain data, where each part of it stands, and what was wrong in it.

    ``problems`` are findings that do not stop the rest of the file from being
    checked (a duplicate key, a tag); ``dropped`` holds the paths of values left
    out of ``data`` because of them, so that later checks do not report them again.
    """

    data: dict[str, Any]
    positions: Positions
    problems: list[Problem]
    dropped: set[Path]


def build(
    document: Composed,
    file: str,
    *,
    mapping: str = "a flow must be a mapping of keys (roost:, name:, ...)",
) -> Built:
    """Plain data and positions of a composed document whose root must be a mapping.

    A root of another kind is refused as ``mapping`` says what the file is (a flow,
    a test file, a serve configuration), followed by what it is instead.
    """
    node = document.root
    if not isinstance(node, MappingNode):
        what = "a list" if isinstance(node, SequenceNode) else "a single value"
        raise fail(file, *_mark(node), f"{mapping}, not {what}")
    limit = max(MAX_NODES, 2 * document.written)
    if document.aliases:
        _check_expansion(node, file, limit)
    builder = _Builder(file, limit)
    data = builder.value(node, (), 0)
    assert isinstance(data, dict)
    return Built(data, builder.positions, builder.problems, builder.dropped)


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(root: Node, file: str, limit: int) -> None:
    """Refuses, before building anything, a document whose aliases expand past ``limit``.

    The limit is MAX_NODES, or twice the values written in the document when it
    is larger: a big flow without aliases is fine; a few lines that expand to
    millions are not.
    """
    sizes = _sizes(root)
    if sizes[id(root)] <= limit:
        return
    node = root
    while True:  # point at the innermost value that alone expands too far
        bigger = next((c for c in _children(node) if sizes[id(c)] > limit), None)
        if bigger is None:
            break
        node = bigger
    raise fail(file, *_mark(node), f"more than {limit} values after expanding aliases")


def _sizes(root: Node) -> dict[int, int]:
    """How many values each node (by ``id``) expands to, its aliases' nodes counted again."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if children_done:
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes


def _short(tag: str) -> str:
    return "!!" + tag.removeprefix(_YAML) if tag.startswith(_YAML) else tag


def _mark(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Builder:
    """Turns nodes into dicts, lists and scalars, recording positions and problems."""

    def __init__(self, file: str, limit: int = MAX_NODES) -> None:
        self.file = file
        self.limit = limit
        self.count = 0
        self.positions = Positions()
        self.problems: list[Problem] = []
        self.dropped: set[Path] = set()
        self._constructor = SafeConstructor()

    def _problem(self, node: Node, message: str, drop: Path | None = None) -> None:
        self.problems.append(Problem(self.file, *_mark(node), message))
        if drop is not None:
            self.dropped.add(drop)

    def value(self, node: Node, path: Path, depth: int) -> Any:
        self.count += 1
        if self.count > self.limit:
            raise fail(
                self.file, *_mark(node), f"more than {self.limit} values after expanding aliases"
            )
        if depth > MAX_DEPTH:
            raise fail(
                self.file,
                *_mark(node),
                f"nesting deeper than {MAX_DEPTH} levels (recursive alias?)",
            )
        self.positions.values[path] = _mark(node)
        if isinstance(node, ScalarNode):
            if node.style in ("|", ">"):
                self.positions.block.add(path)
            return self._scalar(node, path)
        if node.tag not in (f"{_YAML}seq", f"{_YAML}map"):
            self._problem(node, f"YAML tag {_short(node.tag)!r} is not allowed in a flow", path)
        if isinstance(node, SequenceNode):
            return self._sequence(node, path, depth)
        assert isinstance(node, MappingNode)
        return self._mapping(node, path, depth)

    def _scalar(self, node: ScalarNode, path: Path) -> Any:
        tag = node.tag
        if tag not in _SCALAR_TAGS:
            self._problem(node, f"YAML tag {_short(tag)!r} is not allowed in a flow", path)
            return node.value
        if tag in (f"{_YAML}str", f"{_YAML}timestamp"):
            return node.value
        method = getattr(self._constructor, "construct_yaml_" + tag.removeprefix(_YAML))
        try:
            return method(node)
        except (ValueError, KeyError, OverflowError):
            self._problem(node, f"cannot read {node.value!r} as {tag.removeprefix(_YAML)}", path)
            return node.value

    def _sequence(self, node: SequenceNode, path: Path, depth: int) -> list[Any]:
        items = []
        for index, child in enumerate(node.value):
            self.positions.keys[(*path, index)] = _mark(child)
            items.append(self.value(child, (*path, index), depth + 1))
        return items

    def _mapping(self, node: MappingNode, path: Path, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_seen: dict[str, int] = {}
        merged: list[tuple[Node, Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == f"{_YAML}merge":
                merged.extend(self._merge_pairs(value_node, depth))
                continue
            key = self._key(key_node)
            if key is None:
                continue
            if key in first_seen:
                self._problem(key_node, f"duplicate key {key!r} (first at line {first_seen[key]})")
                continue
            first_seen[key] = key_node.start_mark.line + 1
            self.positions.keys[(*path, key)] = _mark(key_node)
            result[key] = self.value(value_node, (*path, key), depth + 1)
        for key_node, value_node in merged:
            key = self._key(key_node)
            if key is None or key in result:
                continue  # explicit keys win over merged ones
            self.positions.keys[(*path, key)] = _mark(key_node)
            result[key] = self.value(value_node, (*path, key), depth + 1)
        return result

    def _key(self, node: Node) -> str | None:
        if not isinstance(node, ScalarNode) or node.tag not in _SCALAR_TAGS:
            self._problem(node, "a key must be plain text, not a list, mapping or tagged value")
            return None
        return str(node.value)

    def _merge_pairs(self, node: Node, depth: int) -> list[tuple[Node, Node]]:
        self.count += 1
        sources = node.value if isinstance(node, SequenceNode) else [node]
        pairs: list[tuple[Node, Node]] = []
        for source in sources:
            if not isinstance(source, MappingNode):
                self._problem(node, "'<<' merges a mapping or a list of mappings")
                return []
            # Earlier sources win, as in YAML's merge key specification.
            pairs.extend(p for p in source.value if p[0].tag != f"{_YAML}merge")
        self.count += len(pairs)
        if self.count > self.limit or depth > MAX_DEPTH:
            raise fail(
                self.file, *_mark(node), f"more than {self.limit} values after expanding aliases"
            )
        return pairs
