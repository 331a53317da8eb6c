"""An agent's ``context`` files, read afresh at every reply, within bounds.

The globs are relative to the flow file's folder and stay inside it: one that
is absolute or climbs out with ``..`` is refused (validation refuses it first),
and a match that is a link to a file outside the folder is not read. A reply is
given at most ``MAX_FILES`` files and ``MAX_BYTES`` bytes of them; beyond that
the reply stops with an error entry naming the agent, rather than walking and
reading without end.

A replay of a run's own recorded flows reads context files only when that
flow's folder is inside the current folder (``Flow.from_record``: a flow loaded
from a run's record): a run file may come from anyone, and its flow's path is
whatever the file says. An edited flow given to the replay is the user's own.
"""

from __future__ import annotations

import glob
import itertools
from pathlib import Path
from typing import TYPE_CHECKING

from roost.errors import RoostError
from roost.flow.context_paths import context_escape
from roost.flow.models import flow_folder

if TYPE_CHECKING:
    from roost.flow.models import Flow

MAX_FILES = 100  # files one reply is given, over all of an agent's globs
MAX_BYTES = 1024 * 1024  # bytes of those files together

HEADER = "Context files (read just now):\n\n"


class ContextFilesError(RoostError):
    """An agent's context files cannot be given: a glob outside the folder, or too much."""


def read_context(flow: Flow, agent: str) -> str:
    """The agent's context files, read now, as one block of text ('' when it has none).

    Raises ContextFilesError naming the agent when a glob leaves the flow's
    folder or the files are more than ``MAX_FILES`` or ``MAX_BYTES``.
    """
    patterns = flow.agents[agent].context if agent in flow.agents else []
    if not patterns:
        return ""
    folder = flow_folder(flow)
    refused = _refusal_of_record(flow, folder)
    budget = _Budget(agent)
    blocks: list[str] = []
    for pattern in patterns:
        if why := context_escape(pattern):
            raise ContextFilesError(f"agent {agent!r}: context {pattern!r} {why}")
        if refused:
            blocks.append(f"### {pattern}\n({refused})")
            continue
        matches = budget.matches(folder, pattern)
        if not matches:
            blocks.append(f"### {pattern}\n(no file matches)")
        for match in matches:
            blocks.append(f"### {match}\n{budget.read(folder, match)}")
    return HEADER + "\n\n".join(blocks)


def _refusal_of_record(flow: Flow, folder: Path) -> str | None:
    """Why a recorded flow's context files are not read: its folder is outside this one."""
    if not flow.from_record or folder.resolve().is_relative_to(Path.cwd().resolve()):
        return None
    return "not read: a replay reads only context files inside the folder it runs in"


class _Budget:
    """What one reply may still be given, in files and bytes."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.files = MAX_FILES
        self.bytes = MAX_BYTES

    def matches(self, folder: Path, pattern: str) -> list[str]:
        """The paths ``pattern`` matches under ``folder``, sorted, within the file budget."""
        found = glob.iglob(pattern, root_dir=folder, recursive=True)
        # Looked for one more than allowed: the walk stops there, however large the tree.
        matches = sorted(itertools.islice(found, self.files + 1))
        if len(matches) > self.files:
            raise ContextFilesError(
                f"agent {self.agent!r}: context {pattern!r} brings the files of one reply "
                f"past {MAX_FILES}, the most a reply is given; name fewer files"
            )
        self.files -= len(matches)
        return matches

    def read(self, folder: Path, match: str) -> str:
        """The text of one match, or a note saying why it was not read."""
        path = (folder / match).resolve()
        if not path.is_relative_to(folder.resolve()):
            return "(a link to a file outside the flow's folder: not read)"
        if not path.is_file():  # a folder, a FIFO or a device would block or never end
            return "(not a regular file: not read)"
        try:
            with path.open("rb") as handle:
                data = handle.read(self.bytes + 1)
        except OSError as exc:
            return f"(cannot read: {exc.strerror})"
        if len(data) > self.bytes:
            raise ContextFilesError(
                f"agent {self.agent!r}: context file {match!r} brings the context of one "
                f"reply past {MAX_BYTES:,} bytes, the most a reply is given; name fewer "
                "or smaller files"
            )
        self.bytes -= len(data)
        # As a file opened as text reads: line ends made '\n'.
        text = data.decode("utf-8", errors="replace")
        return text.replace("\r\n", "\n").replace("\r", "\n")
