"""Text for Graphviz: plain strings, HTML-like labels and attribute values.

The graphviz package writes the DOT source and quotes every id and value; these
functions decide what a value means before it gets there. Text from a flow or a
run is plain (``plain``, through ``graphviz.escape``: backslashes such as
``\\N`` and ``<...>`` stay literal), a tooltip (``tooltip``, which Graphviz
reads twice) or escaped into an HTML-like label (``esc``). Only labels built
here are marked ``Html``, so a name or message holding quotes, backslashes,
angle brackets, braces or control characters can never break the graph or
inject attributes or markup.

The graphviz package is imported where a value is spelt, not when this module
is: building a drawing is the only reason to load it.
"""

from __future__ import annotations

import html
import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from roost.flow.redact import redact

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    import graphviz

# Values substituted from the environment while a flow is drawn (see ``hiding``).
_SECRETS: ContextVar[frozenset[str]] = ContextVar("roost_visualize_secrets", default=frozenset())

# XML 1.0 (which Graphviz's HTML labels are parsed as) forbids these characters.
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_NEWLINE = re.compile("\r\n|\r|\n")


@dataclass(frozen=True)
class Html:
    """An HTML-like label body, already escaped; written as ``<...>``."""

    markup: str


AttrValue = str | Html | float | None
Attrs = dict[str, AttrValue]


@contextmanager
def hiding(secrets: Iterable[str]) -> Iterator[None]:
    """Within this block, ``esc``, ``plain`` and ``tooltip`` mask every secret in their text."""
    token = _SECRETS.set(frozenset(secrets))
    try:
        yield
    finally:
        _SECRETS.reset(token)


def plain(text: str) -> str:
    """``text`` as a DOT string that shows as written, newlines kept; secrets masked."""
    import graphviz

    # escape() doubles every backslash, so the "\n" put in for a newline is the only escape.
    # Graphviz reads "&name;" as an entity and writes it into SVG as it is: "&nbsp;" there
    # is no XML, so the file would not open. "&amp;" is drawn as "&".
    literal: str = graphviz.escape(_visible(text).replace("&", "&amp;"))
    shown: str = graphviz.nohtml(_NEWLINE.sub(r"\\n", literal))
    return shown


def tooltip(text: str) -> str:
    """``text`` as a DOT string for a ``tooltip``, which shows it as written; secrets masked.

    Graphviz reads a tooltip twice: first HTML entities and ``\\n``-like escapes (a
    backslash before any other character is dropped), then ``\\N``, ``\\G``... with
    ``\\\\`` for one backslash. So backslashes are escaped twice and ``&`` once.
    """
    import graphviz

    literal: str = graphviz.escape(graphviz.escape(_visible(text).replace("&", "&amp;")))
    shown: str = graphviz.nohtml(_NEWLINE.sub(r"\\n", literal))
    return shown


def _visible(text: str) -> str:
    """``text`` with secrets masked and the characters XML cannot hold taken out."""
    return _XML_FORBIDDEN.sub("", redact(text, _SECRETS.get()))


def add_node(graph: graphviz.Digraph, node_id: str, values: Mapping[str, AttrValue]) -> None:
    """Adds the node ``node_id`` (from ``roost.visualize.ids``) with these attributes."""
    graph.node(node_id, _attributes=dot_attrs(values))


def add_edge(
    graph: graphviz.Digraph, tail: str, head: str, values: Mapping[str, AttrValue]
) -> None:
    """Adds an edge between two node ids with these attributes."""
    graph.edge(tail, head, _attributes=dot_attrs(values))


def dot_attrs(values: Mapping[str, AttrValue]) -> dict[str, str]:
    """Attributes as the graphviz package takes them; None values are left out.

    An ``id`` comes from ``roost.visualize.ids`` (letters, digits, ``-`` and ``_``) and is
    kept as it is: masking a secret inside it would break the run page's lookups.
    """
    return {key: _value(key, value) for key, value in values.items() if value is not None}


def _value(key: str, value: str | Html | float) -> str:
    if isinstance(value, Html):
        return "<" + value.markup + ">"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if key == "id":
        return value
    return tooltip(value) if key == "tooltip" else plain(value)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def esc(text: str, limit: int | None = None) -> str:
    """Text made safe inside an HTML-like label, cut to ``limit`` characters.

    Never empty: Graphviz refuses an empty ``<B></B>`` or ``<FONT></FONT>``, and one
    that holds only white space (a name that is a tab).
    """
    text = _visible(text)
    if not text.strip():
        return "&#160;"
    if limit is not None:
        text = shorten(text, limit)
    # Graphviz expands \N, \G... even inside HTML labels: a doubled backslash stays one.
    # A label that starts with "]" trips its HTML lexer, so brackets become entities.
    escaped = (
        html.escape(text.replace("\\", "\\\\"), quote=True)
        .replace("[", "&#91;")
        .replace("]", "&#93;")
    )
    return _NEWLINE.sub("<BR/>", escaped)  # a lone "\r" too: dot refuses it in a label


def small(text: str, color: str = "#4a4a4a", size: int = 9) -> str:
    """Escaped text in small print."""
    return f'<FONT POINT-SIZE="{size}" COLOR="{color}">{text}</FONT>'


def table(rows: list[str]) -> Html:
    """A borderless one-column table of already-escaped rows."""
    body = "".join(f"<TR><TD>{row}</TD></TR>" for row in rows)
    return Html(f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{body}</TABLE>')


def wrap_list(
    items: list[str], width: int = 30, max_lines: int = 3, suffixes: list[str] | None = None
) -> list[str]:
    """Names joined by commas into lines of about ``width`` characters; ``+N more`` at the end.

    Each item is followed by its suffix (a count, say); the lines break by the items
    alone, so the same items make the same lines whatever their suffixes.
    """
    ends = suffixes or [""] * len(items)
    lines: list[str] = []
    current = shown = ""
    for index, item in enumerate(items):
        candidate = f"{current}, {item}" if current else item
        if current and len(candidate) > width:
            lines.append(shown + ",")
            current, shown = item, item + ends[index]
            if len(lines) == max_lines:
                return [*lines[:-1], lines[-1] + f" +{len(items) - index} more"]
        else:
            current = candidate
            shown = f"{shown}, {item}{ends[index]}" if shown else item + ends[index]
    if current:
        lines.append(shown)
    return lines
