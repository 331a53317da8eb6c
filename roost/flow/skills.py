"""Skills: folders holding a ``SKILL.md`` that agents are told of and read when they need them.

A ``SKILL.md`` starts with YAML front matter between two ``---`` lines, with
``name`` and ``description``; the rest of the file is the skill's instructions
(its body). Skills are looked for in three places, nearest first:

1. the ``skills/`` folder beside the flow file;
2. each folder the flow lists under ``skill_paths``, in order (relative to the
   flow's folder);
3. the user's skills folder: ``$ROOST_USER_SKILLS`` when it is set, else
   ``skills`` in roost's configuration folder (platformdirs' user config
   folder: ``~/.config/roost/skills`` on Linux).

A place's every sub-folder that holds a ``SKILL.md`` is a skill (a place that
holds one itself is a skill too). When two places have a skill of the same
name, the nearer one wins. The front matter is read with PyYAML's parser
through ``roost.flow.yamlread``: no tag constructs anything, so reading a
skill never runs code.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from yaml.nodes import MappingNode

from roost.errors import FlowError, Problem, RoostError
from roost.flow.describe import did_you_mean
from roost.flow.models import flow_folder
from roost.flow.yamlread import build, compose

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from roost.events import SkillInfo
    from roost.flow.models import Flow

USER_SKILLS_VARIABLE = "ROOST_USER_SKILLS"
SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256 * 1024  # a skill is hand-written instructions, read by a model
MAX_DESCRIPTION = 1024  # characters: it is one line of every system prompt that lists it
SKILL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# How the skill#read tool reaches a model (roost.tools.names.wire_name of ``skill#read``).
SKILL_READ = "skill#read"
SKILL_READ_WIRE = "skill__read"


class SkillError(RoostError):
    """A skill that cannot be read or is not there: one line naming the file or the agent."""


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill found: its name, description, ``SKILL.md`` and where it was found."""

    name: str
    description: str
    file: Path
    source: str  # "flow", the skill_paths entry as the flow writes it, or "user"

    @property
    def info(self) -> SkillInfo:
        """What a ``skills`` event records of it."""
        from roost.events import SkillInfo  # roost validate never loads the events

        return SkillInfo(name=self.name, description=self.description, source=self.source)


@dataclass(frozen=True, slots=True)
class Place:
    """A folder skills are looked for in; ``index`` is its position under ``skill_paths``."""

    folder: Path
    source: str
    index: int | None = None


@dataclass(slots=True)
class Found:
    """The skills found, the nearest of each name first found, and the problems met."""

    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    broken: set[str] = field(default_factory=set)  # folder names of the SKILL.md with a problem


def user_skills_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The user's skills folder: ``$ROOST_USER_SKILLS``, else platformdirs' config folder."""
    env = os.environ if environ is None else environ
    chosen = env.get(USER_SKILLS_VARIABLE)
    if chosen:
        return Path(chosen).expanduser()
    import platformdirs  # only a flow with skills needs it

    return platformdirs.user_config_path("roost", appauthor=False) / "skills"


def uses_skills(flow: Flow) -> bool:
    """Whether any agent of ``flow`` lists skills."""
    return any(agent.skills for agent in flow.agents.values())


def skill_places(flow: Flow, environ: Mapping[str, str] | None = None) -> list[Place]:
    """Where ``flow``'s skills are looked for, nearest first."""
    folder = flow_folder(flow)
    places = [Place(folder / "skills", "flow")]
    for index, entry in enumerate(flow.skill_paths):
        places.append(Place(folder / Path(entry).expanduser(), entry, index))
    places.append(Place(user_skills_folder(environ), "user"))
    return places


def find_skills(flow: Flow, environ: Mapping[str, str] | None = None) -> Found:
    """Every skill of ``flow``'s places, the nearer winning a name, and the problems met."""
    found = Found()
    for place in skill_places(flow, environ):
        if not place.folder.is_dir():
            if place.index is not None:
                found.problems.append(
                    flow.problem(
                        ("skill_paths", place.index),
                        f"skill_paths entry {place.source!r} is not a folder",
                    )
                )
            continue
        _find_in(place, found)
    return found


def _find_in(place: Place, found: Found) -> None:
    """Adds the skills of one place to ``found`` (a nearer place's skills stay)."""
    here: dict[str, Path] = {}
    for file in _skill_files(place.folder):
        try:
            skill = read_skill(file, place.source)
        except FlowError as error:
            found.problems += error.problems
            found.broken.add(file.parent.name)
            continue
        if skill.name in here:
            message = (
                f"a second skill named {skill.name!r} in the same folder "
                f"(the first is {here[skill.name]}); rename one"
            )
            found.problems.append(Problem(str(file), 1, 1, message))
            continue
        here[skill.name] = file
        found.skills.setdefault(skill.name, skill)


def _skill_files(folder: Path) -> list[Path]:
    """The ``SKILL.md`` of ``folder`` itself, else those of its sub-folders, by name."""
    own = folder / SKILL_FILE
    if own.is_file():
        return [own]
    try:
        children = sorted(folder.iterdir())
    except OSError:
        return []
    return [child / SKILL_FILE for child in children if (child / SKILL_FILE).is_file()]


def read_skill(file: Path, source: str) -> Skill:
    """The skill ``file`` describes; raises FlowError with one located problem if it cannot."""
    text = _read_text(file)
    block, _ = _split(text, str(file))
    name, description = _front_matter(block, str(file))
    return Skill(name, description, file, source)


def skill_body(file: Path) -> str:
    """The instructions of the skill at ``file``: what follows its front matter."""
    try:
        text = _read_text(file)
        _, body = _split(text, str(file))
    except FlowError as error:
        raise SkillError(str(error)) from None
    return body.strip()


def _read_text(file: Path) -> str:
    where = str(file)
    try:
        with file.open("rb") as handle:
            data = handle.read(MAX_SKILL_BYTES + 1)
    except OSError as error:
        raise _fail(where, 1, 1, f"cannot read the file: {error.strerror}") from None
    if len(data) > MAX_SKILL_BYTES:
        limit = MAX_SKILL_BYTES // 1024
        raise _fail(where, 1, 1, f"larger than {limit} KiB: a skill must be smaller")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise _fail(where, line, 1, f"invalid UTF-8 (byte 0x{data[error.start]:02x})") from None


_NO_FRONT_MATTER = (
    "no front matter: a SKILL.md starts with a line '---', then 'name:' and "
    "'description:', then a line '---' and the instructions"
)


def _split(text: str, where: str) -> tuple[str, str]:
    """(front matter, body) of a SKILL.md's text."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        raise _fail(where, 1, 1, _NO_FRONT_MATTER)
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise _fail(where, 1, 1, "the front matter has no closing line '---'")


def _front_matter(block: str, where: str) -> tuple[str, str]:
    """(name, description) of a front matter block (which starts on the file's line 2)."""
    if not block.strip():
        raise _fail(where, 2, 1, "the front matter is empty: it needs 'name:' and 'description:'")
    try:
        # A first empty line puts every line and column the parser reports where the file has it.
        composed = compose("\n" + block, where)
        root = composed.root
        if not isinstance(root, MappingNode):
            line = root.start_mark.line + 1
            raise _fail(where, line, 1, "the front matter must be keys: name: and description:")
        built = build(composed, where)
    except FlowError as error:
        raise FlowError(error.problems[:1]) from None
    if built.problems:
        raise FlowError(built.problems[:1])
    data = built.data

    def at(key: str) -> tuple[int, int]:
        return built.positions.value((key,))

    name, description = data.get("name"), data.get("description")
    for key, value in (("name", name), ("description", description)):
        if value is None:
            raise _fail(where, 2, 1, f"the front matter has no {key!r}")
        if not isinstance(value, str) or not value.strip():
            raise _fail(where, *at(key), f"the skill's {key} must be text")
    assert isinstance(name, str) and isinstance(description, str)
    if not SKILL_NAME.match(name):
        raise _fail(
            where,
            *at("name"),
            f"skill name {name!r}: a letter or digit, then letters, digits, '_', '-' "
            "or '.', at most 64",
        )
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION:
        too_long = f"the description is longer than {MAX_DESCRIPTION} characters"
        raise _fail(where, *at("description"), too_long)
    return name, description


def _fail(where: str, line: int, col: int, message: str) -> FlowError:
    return FlowError([Problem(where, line, col, message)])


# --------------------------------------------------------------------------- what agents see


def wanted(flow: Flow) -> set[str] | None:
    """The names of the skills ``flow``'s agents list; None when one lists ``all``."""
    names: set[str] = set()
    for agent in flow.agents.values():
        if agent.skills == "all":
            return None
        names.update(agent.skills)
    return names


def catalogue(flow: Flow, found: Found) -> tuple[SkillInfo, ...]:
    """The skills ``flow``'s agents may use, by name: what a ``skills`` event records."""
    names = wanted(flow)
    return tuple(
        found.skills[name].info for name in sorted(found.skills) if names is None or name in names
    )


def current_catalogue(
    flow: Flow, environ: Mapping[str, str] | None = None
) -> tuple[SkillInfo, ...]:
    """The catalogue as the folders hold it now; raises SkillError on a broken ``SKILL.md``."""
    found = find_skills(flow, environ)
    errors = [problem for problem in found.problems if problem.severity == "error"]
    if errors:
        raise SkillError(str(errors[0]))
    return catalogue(flow, found)


def agent_skills(flow: Flow, agent: str, known: Iterable[SkillInfo]) -> tuple[SkillInfo, ...]:
    """The skills ``agent`` is shown, in the order it lists them (by name for ``all``).

    Raises SkillError when it lists a skill that ``known`` lacks.
    """
    chosen = flow.agents[agent].skills
    by_name = {skill.name: skill for skill in known}
    if chosen == "all":
        return tuple(by_name[name] for name in sorted(by_name))
    missing = [name for name in chosen if name not in by_name]
    if missing:
        hint = did_you_mean(missing[0], by_name)
        raise SkillError(f"agent {agent!r}: no skill named {missing[0]!r}{hint}")
    return tuple(by_name[name] for name in dict.fromkeys(chosen))


def skill_problems(flow: Flow, environ: Mapping[str, str] | None = None) -> list[Problem]:
    """Broken ``SKILL.md`` files and skills an agent lists that no place has, located."""
    if not uses_skills(flow) and not flow.skill_paths:
        return []
    found = find_skills(flow, environ)
    problems = list(found.problems)
    broken = bool(problems)
    for name, agent in flow.agents.items():
        if agent.skills == "all":
            continue
        for index, skill in enumerate(agent.skills):
            if skill in found.skills or skill in found.broken:
                continue  # a broken SKILL.md of that folder is told already, at its own line
            hint = did_you_mean(skill, found.skills)
            where = " (or its SKILL.md is one of those with a problem)" if broken else ""
            message = (
                f"agent {name!r}: no skill named {skill!r}{hint}{where}; skills are looked "
                f"for in {_places_text(flow, environ)}"
            )
            problems.append(flow.problem(("agents", name, "skills", index), message))
    return problems


def _places_text(flow: Flow, environ: Mapping[str, str] | None) -> str:
    places = skill_places(flow, environ)
    return ", ".join(f"{place.folder}/" for place in places)
