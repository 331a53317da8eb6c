"""skill#read called as a model calls it: the body of one of the agent's own skills."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from roost.testing import unchecked_flow
from roost.tools import ToolOutcome
from roost.tools.skill_tool import SkillReadTool
from tests.fakes.skills import write_skill

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SkillReadTool:
    """skill#read for an agent with the skills tea and empty, beside a skill it lacks."""
    monkeypatch.setenv("ROOST_USER_SKILLS", str(tmp_path / "no-user-skills"))
    write_skill(tmp_path / "skills", "tea", "Brewing tea.", body="Boil water. Steep 3 minutes.")
    write_skill(tmp_path / "skills", "empty", "Nothing to say.", body="")
    write_skill(tmp_path / "skills", "coffee", "Brewing coffee.")
    flow = unchecked_flow(
        {"roost": 1, "name": "drinks", "agents": {"helper": {"skills": ["tea", "empty"]}}},
        path=tmp_path / "flow.yaml",
    )
    return SkillReadTool("skill__read", flow, "helper")


async def test_a_skill_of_the_agent_gives_its_body(reader: SkillReadTool) -> None:
    assert await reader.call({"name": "tea"}) == ToolOutcome("Boil water. Steep 3 minutes.")
    assert await reader.call({"name": "empty"}) == ToolOutcome(
        "(the skill 'empty' has no instructions)"
    )


async def test_a_skill_the_agent_lacks_is_refused_naming_its_own(reader: SkillReadTool) -> None:
    assert await reader.call({"name": "coffee"}) == ToolOutcome(
        "no skill named 'coffee'; your skills: empty, tea", is_error=True
    )
    wrong = await reader.call({"skill": "tea"})
    assert wrong.is_error and wrong.content.startswith("invalid arguments: ")
