"""Reading drawings back: DOT laid out by Graphviz as JSON, SVG as XML, PNG as pixels."""

from __future__ import annotations

import json
import struct
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass, field
from typing import Any

import graphviz

from roost.visualize.dot_program import run_dot

SVG = "{http://www.w3.org/2000/svg}"


@dataclass
class Graph:
    """A DOT source as Graphviz parsed and laid it out."""

    attrs: dict[str, Any]
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # by id attribute
    edges: dict[str, dict[str, Any]] = field(default_factory=dict)  # by id attribute
    clusters: dict[str, set[str]] = field(default_factory=dict)  # cluster id -> node ids

    def ends(self, edge_id: str) -> tuple[str, str]:
        edge = self.edges[edge_id]
        return edge["tail_id"], edge["head_id"]


def rendered(source: str, fmt: str = "svg") -> bytes:
    """The DOT text ``source`` laid out by the real ``dot`` in ``fmt`` (so it must be valid)."""
    return run_dot(graphviz.Source(source), fmt)


def laid_out(source: str) -> Graph:
    """Runs ``dot -Tjson0`` on ``source`` (so it must be valid DOT) and indexes the result."""
    data = json.loads(rendered(source, "json0"))
    graph = Graph(attrs={k: v for k, v in data.items() if k not in ("objects", "edges")})
    by_gvid: dict[int, str] = {}
    for obj in data.get("objects", []):
        if "nodes" in obj or obj.get("name", "").startswith("cluster"):
            continue
        graph.nodes[obj["id"]] = obj
        by_gvid[obj["_gvid"]] = obj["id"]
    for obj in data.get("objects", []):
        if obj.get("name", "").startswith("cluster"):
            graph.clusters[obj["id"]] = {by_gvid[n] for n in obj.get("nodes", [])}
    for edge in data.get("edges", []):
        edge = {**edge, "tail_id": by_gvid[edge["tail"]], "head_id": by_gvid[edge["head"]]}
        graph.edges[edge.get("id", f"edge{edge['_gvid']}")] = edge
    return graph


def svg_texts(svg: str | bytes) -> dict[str, str]:
    """The text drawn inside each element with an id, joined with spaces."""
    root = ET.fromstring(svg)
    texts: dict[str, str] = {}
    for group in root.iter(f"{SVG}g"):
        if "id" in group.attrib:
            words = [t.text or "" for t in group.iter(f"{SVG}text")]
            texts[group.attrib["id"]] = " ".join(words)
    return texts


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and unfiltered rows of an 8-bit RGB or RGBA PNG (stdlib only)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and colour in (2, 6), f"unsupported PNG (depth {depth}, colour {colour})"
    step = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    rows: list[bytes] = []
    previous = bytearray(width * step)
    stride = width * step + 1
    for y in range(height):
        kind, line = raw[y * stride], bytearray(raw[y * stride + 1 : (y + 1) * stride])
        _unfilter(kind, line, previous, step)
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def _unfilter(kind: int, line: bytearray, prev: bytearray, step: int) -> None:
    for i in range(len(line)):
        left = line[i - step] if i >= step else 0
        up = prev[i]
        corner = prev[i - step] if i >= step else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            pred = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
            line[i] = (line[i] + pred) & 0xFF


def distinct_colours(data: bytes, sample: int = 4) -> int:
    """How many different pixel values a PNG holds (every ``sample``-th pixel of each row)."""
    width, _height, rows = png_pixels(data)
    step = len(rows[0]) // width if rows else 3
    seen = set()
    for row in rows[::sample]:
        for x in range(0, len(row), step * sample):
            seen.add(row[x : x + step])
    return len(seen)


def non_background_share(data: bytes) -> float:
    """The share of sampled pixels that differ from the top-left pixel."""
    width, _height, rows = png_pixels(data)
    step = len(rows[0]) // width
    background = rows[0][:step]
    total = differ = 0
    for row in rows[::3]:
        for x in range(0, len(row), step * 3):
            total += 1
            differ += row[x : x + step] != background
    return differ / max(total, 1)
