"""A studio's flow files: read with their hash and problems, rewritten inside the folder only.

Every file is named by its path inside the served flows folder and found by
``FlowDir.file``, which refuses ``..``, absolute paths and links that lead out.
A rewrite goes to a new file beside the real one, then takes its place
(``os.replace``): a reader never sees half a file, and a link inside the folder
stays a link to the file it named.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from roost.engine.flows import text_hash
from roost.errors import Problem, RoostError
from roost.flow import check_flow_text
from roost.loading import tool_problems
from roost.studio.roundtrip import NotYaml, place_of, places, read_json

SUFFIXES = (".yaml", ".yml")


class FlowDir(Protocol):
    """The server's flows folder (``roost.serve.flowdir.FlowDir``), as the studio uses it."""

    given: Path
    root: Path

    def file(self, name: str) -> Path:
        """The file ``name`` names inside the folder; refused when it leads outside."""
        ...


class Exists(RoostError):
    """A new flow whose file is there already."""


class Outside(RoostError):
    """A new flow's path that leads out of the flows folder."""


def read(folder: FlowDir, name: str) -> str:
    """The text of the flow file ``name`` names (refused when it leads outside)."""
    return folder.file(name).read_text(encoding="utf-8")


def shown(folder: FlowDir, name: str, text: str) -> dict[str, Any]:
    """``{"hash", "text", "flow", "problems"}`` of a flow's text, as the studio shows it.

    Each problem also names the ``path`` (a JSON pointer) of the key its line and
    column fall in, so that a page shows it at that key's field.
    """
    try:
        flow = read_json(text)
    except NotYaml:
        flow = None
    found = places(text) if flow is not None else []
    return {
        "hash": text_hash(text),
        "text": text,
        "flow": flow,
        "problems": [_problem(p, found) for p in problems(folder, name, text)],
    }


def problems(folder: FlowDir, name: str, text: str) -> list[Problem]:
    """Every problem of ``text`` as the flow ``name`` of the folder, its tools' included."""
    checked = check_flow_text(text, str(folder.given / name))
    found = list(checked.problems)
    if checked.flow is not None:
        found += tool_problems(checked.flow)
    return found


def _problem(problem: Problem, found: list[tuple[int, int, str]]) -> dict[str, Any]:
    line, column = problem.line or 0, problem.col or 0
    return {
        "line": problem.line,
        "column": problem.col,
        "severity": problem.severity,
        "message": problem.message,
        "path": place_of(found, line, column) if line else None,
    }


def rewrite(folder: FlowDir, name: str, text: str) -> None:
    """Writes ``text`` in place of the file ``name`` names, all at once."""
    target = folder.file(name).resolve()
    _replace(target, text)


def create(folder: FlowDir, name: str, text: str) -> None:
    """Writes a new flow file ``name`` inside the folder; Exists when one is there."""
    target = new_file(folder, name)
    try:
        with target.open("x", encoding="utf-8") as file:  # never through a link: O_EXCL
            file.write(text)
    except FileExistsError as error:
        raise Exists(f"flow {name!r}: a file of that name is there already") from error


def new_file(folder: FlowDir, name: str) -> Path:
    """Where a new flow ``name`` goes: inside the folder, in a folder that is there."""
    if not name or "\x00" in name or "\\" in name:
        raise Outside(f"flow {name!r}: give the path of a flow file inside the folder")
    relative = PurePosixPath(name)
    if relative.is_absolute() or ".." in relative.parts or relative.suffix not in SUFFIXES:
        raise Outside(f"flow {name!r}: a flow file inside the folder, ending in .yaml")
    parent = (folder.root / relative).parent.resolve()
    if not parent.is_relative_to(folder.root) or not parent.is_dir():
        raise Outside(f"flow {name!r}: its folder is not inside the flows folder")
    target = parent / relative.name
    if os.path.lexists(target):
        raise Exists(f"flow {name!r}: a file of that name is there already")
    return target


def _replace(target: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".roost-", suffix=".yaml")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, target.stat().st_mode & 0o777)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
