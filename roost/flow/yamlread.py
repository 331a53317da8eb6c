"""Reading a flow file safely: bytes to text, text to plain data with positions.

PyYAML only *composes* nodes here (a ``SafeLoader`` subclass); roost builds the
Python values itself so that no tag can construct an object, duplicate keys
are caught, alias expansion is counted (a "billion laughs" file stops after
``MAX_NODES`` values) and every key and value keeps its line and column.
"""

from __future__ import annotations

import os
from pathlib import Path as FsPath
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from roost.errors import FlowError, Problem
from roost.flow.positions import Path, Positions

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


class _Loader(yaml.SafeLoader):
    """A SafeLoader used only to compose nodes, with a bound on nesting depth."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise ComposerError(None, None, f"nesting deeper than {MAX_DEPTH} levels", mark)
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self._depth -= 1


def compose(text: str, file: str) -> Node:
    """The single YAML document of ``text`` as a node tree, or a located FlowError."""
    if len(text) > MAX_BYTES:
        raise fail(
            file, 1, 1, f"file is larger than {MAX_BYTES // 1024} KiB; a flow must be smaller"
        )
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise fail(file, line, 1, "binary file (NUL byte): a flow is UTF-8 text")
    loader: _Loader | None = None
    try:
        loader = _Loader(text)
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as error:
        raise _syntax_error(error, file) from None
    except yaml.reader.ReaderError as error:
        line = text.count("\n", 0, error.position) + 1
        col = error.position - (text.rfind("\n", 0, error.position) + 1) + 1
        char = error.character if isinstance(error.character, int) else ord(error.character)
        raise fail(file, line, col, f"character U+{char:04X} is not allowed in YAML") from None
    except yaml.YAMLError as error:  # any other PyYAML error has no position
        raise fail(file, 1, 1, f"invalid YAML: {_one_line(str(error))}") from None
    finally:
        if loader is not None:
            loader.dispose()
    if node is None:
        raise fail(file, 1, 1, "empty file: a flow needs at least 'roost: 1'")
    return node


def _syntax_error(error: yaml.MarkedYAMLError, file: str) -> FlowError:
    mark = error.problem_mark or error.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    if isinstance(error, ComposerError) and error.problem == "but found another document":
        return fail(file, line, col, "several YAML documents in one file; a flow is one document")
    problem = _one_line(error.problem or "syntax error")
    context = error.context
    if context and error.context_mark and error.context_mark is not mark:
        context = f"{context} at line {error.context_mark.line + 1}"
    suffix = f" ({_one_line(context)})" if context else ""
    return fail(file, line, col, f"invalid YAML: {problem}{suffix}")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def build(node: Node, file: str) -> tuple[dict[str, Any], Positions]:
    """Plain data and positions of a composed document whose root must be a mapping."""
    if not isinstance(node, MappingNode):
        what = "a list" if isinstance(node, SequenceNode) else "a single value"
        line, col = _mark(node)
        raise fail(
            file, line, col, f"a flow must be a mapping of keys (roost:, name:, ...), not {what}"
        )
    limit = _check_expansion(node, file)
    builder = _Builder(file, limit)
    data = builder.value(node, (), 0)
    if builder.problems:
        raise FlowError(builder.problems)
    assert isinstance(data, dict)
    return data, builder.positions


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(root: Node, file: str) -> int:
    """Refuses, before building anything, a document whose aliases expand too far.

    Gives the number of values the document may build: MAX_NODES, or twice the
    values written in it when it is larger (a big flow without aliases is fine;
    a few lines that expand to millions are not).
    """
    sizes: dict[int, int] = {}
    visiting: set[int] = set()

    def size(node: Node, depth: int) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        if id(node) in visiting:
            raise fail(file, *_mark(node), "an alias refers to its own anchor (a recursive value)")
        if depth > MAX_DEPTH:
            raise fail(file, *_mark(node), f"nesting deeper than {MAX_DEPTH} levels")
        visiting.add(id(node))
        sizes[id(node)] = 1 + sum(size(child, depth + 1) for child in _children(node))
        visiting.discard(id(node))
        return sizes[id(node)]

    total = size(root, 0)
    limit = max(MAX_NODES, 2 * len(sizes))
    if total <= limit:
        return limit
    node = root
    while True:  # point at the innermost value that alone expands too far
        bigger = next((c for c in _children(node) if sizes[id(c)] > limit), None)
        if bigger is None:
            break
        node = bigger
    raise fail(file, *_mark(node), f"more than {limit} values after expanding aliases")


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
        self._constructor = SafeConstructor()

    def _problem(self, node: Node, message: str) -> None:
        self.problems.append(Problem(self.file, *_mark(node), message))

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
            return self._scalar(node)
        if node.tag not in (f"{_YAML}seq", f"{_YAML}map"):
            self._problem(node, f"YAML tag {_short(node.tag)!r} is not allowed in a flow")
        if isinstance(node, SequenceNode):
            return self._sequence(node, path, depth)
        assert isinstance(node, MappingNode)
        return self._mapping(node, path, depth)

    def _scalar(self, node: ScalarNode) -> Any:
        tag = node.tag
        if tag not in _SCALAR_TAGS:
            self._problem(node, f"YAML tag {_short(tag)!r} is not allowed in a flow")
            return node.value
        if tag in (f"{_YAML}str", f"{_YAML}timestamp"):
            return node.value
        method = getattr(self._constructor, "construct_yaml_" + tag.removeprefix(_YAML))
        try:
            return method(node)
        except (ValueError, KeyError, OverflowError):
            self._problem(node, f"cannot read {node.value!r} as {tag.removeprefix(_YAML)}")
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
