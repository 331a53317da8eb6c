"""``skill#read``: the tool that gives a model the instructions of one of its skills.

Every agent that lists ``skills`` is offered it. The skill is looked up when
the model asks, in the places of ``roost.flow.skills``, among the skills that
agent may use; the result is the body of its ``SKILL.md`` (the run's log keeps
it, so a replay answers with the same text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.errors import FlowError
from roost.flow.describe import did_you_mean
from roost.flow.skills import SkillError, find_skills, skill_body
from roost.messages import ToolSpec
from roost.tools.arguments import argument_problem, schema_validator
from roost.tools.base import Declared, ToolOutcome

if TYPE_CHECKING:
    from roost.flow.models import Flow

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "description": "The skill's name."},
    },
    "required": ["name"],
    "additionalProperties": False,
}
DESCRIPTION = (
    "Read the instructions of one of your skills (listed in your system prompt) "
    "before doing a task it covers."
)


def skill_spec(wire: str) -> ToolSpec:
    """How ``skill#read`` is offered to a model under the wire name ``wire``."""
    return ToolSpec(name=wire, description=DESCRIPTION, parameters=PARAMETERS)


def skill_declared(wire: str) -> Declared:
    """``skill#read`` as a model is offered it, reading no folder (what a replay offers)."""
    return Declared(skill_spec(wire), timeout=SkillReadTool.timeout)


class SkillReadTool:
    """``skill#read`` for one agent of one flow."""

    direct_output = False
    approval = False
    timeout = 10.0

    def __init__(self, wire: str, flow: Flow, agent: str) -> None:
        self.spec = skill_spec(wire)
        self._flow = flow
        self._agent = agent
        self._validator = schema_validator(PARAMETERS)

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        """The body of the named skill; an unknown or broken skill is an error result."""
        if problem := argument_problem(self._validator, arguments):
            return ToolOutcome(f"invalid arguments: {problem}", is_error=True)
        name = arguments["name"]
        chosen = self._flow.agents[self._agent].skills
        found = find_skills(self._flow).skills
        mine = sorted(found if chosen == "all" else set(chosen) & set(found))
        if name not in mine:
            known = ", ".join(mine) or "none"
            hint = did_you_mean(name, mine)
            return ToolOutcome(f"no skill named {name!r}{hint}; your skills: {known}", True)
        try:
            body = skill_body(found[name].file)
        except (SkillError, FlowError) as exc:
            return ToolOutcome(str(exc), is_error=True)
        return ToolOutcome(body or f"(the skill {name!r} has no instructions)")
