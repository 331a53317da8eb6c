"""Skill folders as a person writes them: the flow tests and the engine's tests both need one."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def write_skill(folder: Path, name: str, description: str, body: str = "Do it.") -> Path:
    """A skill folder ``folder/name`` whose SKILL.md names it ``name``."""
    (folder / name).mkdir(parents=True, exist_ok=True)
    file = folder / name / "SKILL.md"
    file.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    return file
