"""The flows a server offers: the YAML files under its ``--flows`` folder, and nothing else.

A client names a flow by its path inside the folder (``team/review.yaml``).
A path that leads outside it, by ``..``, an absolute path or a symbolic link,
is refused before any file is opened.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from roost.engine.flows import text_hash
from roost.errors import Problem
from roost.flow import Flow, check_flow_file, load_flow_text, load_recorded_flow
from roost.flow.loader import Checked
from roost.loading import load_flow, tool_problems
from roost.serve.errors import NoSuchFlow, OutsideFlows

SUFFIXES = (".yaml", ".yml")
MOST_FLOWS = 2000  # files listed from one folder; a larger folder is cut, not walked forever
_SKIPPED = {".roost", ".git", "node_modules", "__pycache__"}


@dataclass(frozen=True, slots=True)
class FlowEntry:
    """One flow file as ``GET /flows`` lists it."""

    path: str
    name: str | None
    description: str | None
    problems: tuple[str, ...]

    @property
    def valid(self) -> bool:
        return self.name is not None and not self.problems


class FlowDir:
    """The flows folder of one server."""

    def __init__(self, root: Path) -> None:
        self.given = root  # as the operator wrote it: runs record their flow's path from it
        self.root = root.resolve()
        self._listed: dict[str, tuple[tuple[int, int], FlowEntry]] = {}
        self._loaded: dict[str, tuple[bytes, Flow]] = {}
        self._shown: dict[tuple[str, str, str], Flow] = {}

    def file(self, name: str) -> Path:
        """The file ``name`` names inside the folder; refused when it leads outside."""
        if not name or "\x00" in name or "\\" in name:
            raise OutsideFlows(f"flow {name!r}: give the path of a flow file inside the folder")
        relative = PurePosixPath(name)
        if relative.is_absolute() or ".." in relative.parts:
            raise OutsideFlows(f"flow {name!r}: the path leads outside the flows folder")
        try:
            resolved = (self.root / relative).resolve()
            found = resolved.is_file()
        except OSError as error:  # a name too long for the file system, a loop of links
            reason = error.strerror or type(error).__name__
            raise NoSuchFlow(f"flow {name!r}: {reason.lower()}") from error
        if not resolved.is_relative_to(self.root):
            raise OutsideFlows(f"flow {name!r}: the path leads outside the flows folder")
        if not found:
            raise NoSuchFlow(f"flow {name!r}: no such file in the flows folder")
        if resolved.suffix not in SUFFIXES:
            raise OutsideFlows(f"flow {name!r}: a flow file ends in .yaml or .yml")
        return self.given / relative

    def load(self, name: str) -> Flow:
        """The flow ``name`` names, checked with its tools (FlowError when it is wrong).

        A flow that loaded is kept while its file's content stays the same: parsing
        and checking it again for each of many runs costs more than the rest of
        starting one.
        """
        path = self.file(name)
        try:
            digest = hashlib.sha256(path.read_bytes()).digest()
        except OSError:
            return load_flow(path)  # which says what is wrong with the file
        kept = self._loaded.get(name)
        if kept is not None and kept[0] == digest:
            return kept[1]
        flow = load_flow(path)
        if len(self._loaded) >= MOST_FLOWS:
            self._loaded.clear()
        self._loaded[name] = (digest, flow)
        return flow

    def shown(self, path: str, text: str) -> Flow:
        """A run's flow (recorded as ``path`` and ``text``) as the server shows it.

        Only a flow that is a file of this folder as it is now reads the server's
        environment; any other (an imported run's, an older text) is read without
        it, so that a run from elsewhere never shows the server's variables.
        """
        key = ("own" if self._holds(path, text) else "recorded", path, text_hash(text))
        flow = self._shown.get(key)
        if flow is None:
            load = load_flow_text if key[0] == "own" else load_recorded_flow
            flow = load(text, path)
            if len(self._shown) >= MOST_FLOWS:
                self._shown.clear()
            self._shown[key] = flow
        return flow

    def _holds(self, path: str, text: str) -> bool:
        """Whether ``path`` names a file of this folder whose text is ``text``."""
        try:
            name = Path(path).relative_to(self.given).as_posix()
            return self.file(name).read_bytes() == text.encode()
        except (ValueError, OSError, OutsideFlows, NoSuchFlow):
            return False

    def check(self, name: str) -> list[Problem]:
        """Every problem of the flow ``name`` names, its tools' included."""
        return _problems(check_flow_file(self.file(name)), name)

    def entries(self) -> list[FlowEntry]:
        """The flow files of the folder by path, each checked as language once per change."""
        found: list[FlowEntry] = []
        for path in self._files():
            name = path.relative_to(self.root).as_posix()
            try:
                stat = path.stat()
            except OSError:
                continue
            stamp = (stat.st_mtime_ns, stat.st_size)
            known = self._listed.get(name)
            if known is None or known[0] != stamp:
                known = self._listed[name] = (stamp, _entry(name, self.given / name))
            found.append(known[1])
        return found

    def _files(self) -> list[Path]:
        files: list[Path] = []
        for folder, subfolders, names in os.walk(self.root):
            subfolders[:] = sorted(d for d in subfolders if d not in _SKIPPED and d[0] != ".")
            for name in sorted(names):
                if name.endswith(SUFFIXES):
                    path = Path(folder, name)
                    if path.resolve().is_relative_to(self.root):
                        files.append(path)
                    if len(files) >= MOST_FLOWS:
                        return files
        return files


def _entry(name: str, path: Path) -> FlowEntry:
    checked = check_flow_file(path)
    flow = checked.flow
    errors = tuple(str(_named(p, name)) for p in checked.problems if p.severity == "error")
    if flow is None:
        return FlowEntry(name, None, None, errors)
    return FlowEntry(name, flow.name, flow.description, errors)


def _problems(checked: Checked, name: str) -> list[Problem]:
    problems = list(checked.problems)
    if checked.flow is not None:
        problems += tool_problems(checked.flow)
    return [_named(problem, name) for problem in problems]


def _named(problem: Problem, name: str) -> Problem:
    """The problem located by the flow's name in the folder: a page or a client is told
    where in the flow, never where the server keeps its files."""
    return replace(problem, file=name)
