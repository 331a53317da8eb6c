"""Where an agent's ``context:`` globs may look: inside the flow file's folder, nowhere else.

A glob is read at every reply, and a replay reads the globs of a flow recorded
in a run file that may come from anyone: one that starts at the root (``/``,
``C:\\``) or climbs out with ``..`` could walk the whole file system or read
files that are none of the flow's business.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath, PureWindowsPath

_PARTS = re.compile(r"[/\\]")


def context_escape(pattern: str) -> str | None:
    """Why ``pattern`` reaches outside the flow's folder, or None when it stays inside."""
    if PurePosixPath(pattern).is_absolute() or PureWindowsPath(pattern).anchor:
        return "is an absolute path; give a path relative to the flow file's folder"
    if ".." in _PARTS.split(pattern):
        return "climbs out of the flow file's folder with '..'; give a path inside it"
    return None
