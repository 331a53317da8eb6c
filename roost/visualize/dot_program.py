"""Laying out a drawing with Graphviz's ``dot`` program: the one place roost runs it.

The graphviz package starts ``dot``; this module turns its failures into one
line each: a missing ``dot`` names the install command, a failing one quotes
the first line of what it said.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roost.errors import RoostError
from roost.visualize.dot_text import shorten

if TYPE_CHECKING:
    import graphviz

INSTALL_GRAPHVIZ = (
    "install Graphviz: apt-get install graphviz (Debian/Ubuntu), brew install graphviz (macOS)"
)
_STDERR_QUOTED = 200  # characters of dot's complaint kept in the error


def run_dot(graph: graphviz.Digraph | graphviz.Source, fmt: str) -> bytes:
    """``graph`` laid out by ``dot`` in ``fmt`` (``svg``, ``png``...); RoostError naming the fix."""
    import graphviz

    try:
        data: bytes = graph.pipe(format=fmt, quiet=True)
    except graphviz.ExecutableNotFound as exc:
        raise RoostError(INSTALL_GRAPHVIZ) from exc
    except graphviz.CalledProcessError as exc:
        said = (exc.stderr or b"").decode("utf-8", "replace").strip().splitlines()
        shown = shorten(said[0], _STDERR_QUOTED) if said else f"exit {exc.returncode}"
        raise RoostError(f"dot failed: {shown}") from exc
    except OSError as exc:  # found but not runnable: permissions, a broken file
        raise RoostError(f"cannot run dot: {exc.strerror or exc}") from exc
    return data


def svg_markup(graph: graphviz.Digraph) -> str:
    """The SVG drawing of ``graph`` without its XML prolog, ready to inline in HTML."""
    svg = run_dot(graph, "svg").decode("utf-8")
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg
