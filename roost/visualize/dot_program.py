"""Running Graphviz's ``dot`` program: the one place roost starts it.

When ``dot`` is missing the error says exactly how to install it.
"""

from __future__ import annotations

import shutil
import subprocess

from roost.errors import RoostError

INSTALL_GRAPHVIZ = (
    "install Graphviz: apt-get install graphviz (Debian/Ubuntu), brew install graphviz (macOS)"
)
DOT_TIMEOUT = 120.0  # seconds; a 30-agent flow lays out in well under one


def run_dot(source: str, fmt: str, *, timeout: float = DOT_TIMEOUT) -> bytes:
    """The output of ``dot -T<fmt>`` for ``source``; RoostError naming the fix when it fails."""
    program = shutil.which("dot")
    if program is None:
        raise RoostError(INSTALL_GRAPHVIZ)
    try:
        done = subprocess.run(
            [program, f"-T{fmt}"],
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise RoostError(INSTALL_GRAPHVIZ) from exc
    except subprocess.TimeoutExpired as exc:
        raise RoostError(f"dot did not finish within {timeout:g} seconds") from exc
    except OSError as exc:
        raise RoostError(f"cannot run dot: {exc.strerror or exc}") from exc
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RoostError("dot failed: " + (lines[0] if lines else f"exit {done.returncode}"))
    return done.stdout


def svg_markup(source: str) -> str:
    """The SVG drawing of ``source`` without its XML prolog, ready to inline in HTML."""
    svg = run_dot(source, "svg").decode("utf-8")
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg
