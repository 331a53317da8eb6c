"""Spelling DOT: quoted strings, HTML-like labels and attribute lists.

Every piece of text from a flow or a run reaches the DOT source through one of
these functions, so a name or message holding quotes, backslashes, angle
brackets, braces or control characters can never break the graph or inject
attributes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from roost.flow.redact import redact

# Values substituted from the environment while a flow is drawn (see ``hiding``).
_SECRETS: ContextVar[frozenset[str]] = ContextVar("roost_visualize_secrets", default=frozenset())

# XML 1.0 (which Graphviz's HTML labels are parsed as) forbids these characters.
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


@dataclass(frozen=True)
class Html:
    """An HTML-like label body, already escaped; written as ``<...>``."""

    markup: str


AttrValue = str | Html | float | None
Attrs = dict[str, AttrValue]


@contextmanager
def hiding(secrets: Iterable[str]) -> Iterator[None]:
    """Within this block, ``esc`` and ``quote`` mask every secret in the text they are given."""
    token = _SECRETS.set(frozenset(secrets))
    try:
        yield
    finally:
        _SECRETS.reset(token)


def quote_id(name: str) -> str:
    """A DOT id in double quotes; ids come from ``roost.visualize.ids`` (letters, digits, -)."""
    return f'"{name}"'


def quote(text: str) -> str:
    """A DOT double-quoted string whose escString sequences (``\\N``, ``\\l``...) and
    character entities (``&nbsp;``, ``&#60;``) are inert."""
    return _quoted(text, "\\\\", "\\n")


def _quoted(text: str, backslash: str, newline: str) -> str:
    text = _XML_FORBIDDEN.sub("", redact(text, _SECRETS.get()))
    # Graphviz reads "&name;" in a string as an entity and writes it into SVG as it is:
    # "&nbsp;" there is no XML, so the file would not open. "&amp;" is drawn as "&".
    text = text.replace("&", "&amp;").replace("\\", backslash).replace('"', '\\"')
    return '"' + text.replace("\r\n", newline).replace("\n", newline).replace("\r", newline) + '"'


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def esc(text: str, limit: int | None = None) -> str:
    """Text made safe inside an HTML-like label, cut to ``limit`` characters.

    Never empty: Graphviz refuses an empty ``<B></B>`` or ``<FONT></FONT>``.
    """
    text = _XML_FORBIDDEN.sub("", redact(text, _SECRETS.get()))
    if not text:
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
    return escaped.replace("\n", "<BR/>")


def attrs(values: Mapping[str, AttrValue]) -> str:
    """``[key="value", ...]``; None values are left out."""
    parts = []
    for key, value in values.items():
        if value is None:
            continue
        parts.append(f"{key}={quote_id(str(value)) if key == 'id' else _value(value)}")
    return "[" + ", ".join(parts) + "]" if parts else ""


def edge_statement(source: str, target: str, values: Mapping[str, AttrValue]) -> str:
    """``"source" -> "target" [...];`` between two element ids."""
    return f"  {quote_id(source)} -> {quote_id(target)} {attrs(values)};"


def _value(value: str | Html | float) -> str:
    if isinstance(value, Html):
        return "<" + value.markup + ">"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    # Graphviz expands the escapes of a tooltip twice ("\\\\N" would still be the node's
    # name) and shows its "\\n" as written, so a line break goes in as an entity.
    return _quoted(value, "\\\\\\\\", "&#10;")


def small(text: str, color: str = "#4a4a4a", size: int = 9) -> str:
    """Escaped text in small print."""
    return f'<FONT POINT-SIZE="{size}" COLOR="{color}">{text}</FONT>'


def table(rows: list[str]) -> Html:
    """A borderless one-column table of already-escaped rows."""
    body = "".join(f"<TR><TD>{row}</TD></TR>" for row in rows)
    return Html(f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{body}</TABLE>')


def wrap_list(items: list[str], width: int = 30, max_lines: int = 3) -> list[str]:
    """Names joined by commas into lines of about ``width`` characters; ``+N more`` at the end."""
    lines: list[str] = []
    current = ""
    for index, item in enumerate(items):
        candidate = f"{current}, {item}" if current else item
        if current and len(candidate) > width:
            lines.append(current + ",")
            current = item
            if len(lines) == max_lines:
                return [*lines[:-1], lines[-1] + f" +{len(items) - index} more"]
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines
