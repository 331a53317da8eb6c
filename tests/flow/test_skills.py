"""Skills are found beside the flow, in its skill_paths and in the user's folder, nearer first;
broken SKILL.md files and unknown names are one located line each."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import roost
from roost.errors import FlowError
from roost.flow.skills import (
    MAX_DESCRIPTION,
    MAX_SKILL_BYTES,
    find_skills,
    read_skill,
    skill_body,
    user_skills_folder,
)
from tests.cli_inprocess import run_cli
from tests.fakes.skills import write_skill

if TYPE_CHECKING:
    from pathlib import Path

FLOW = """\
roost: 1
name: helpdesk
skill_paths: [PATHS]
providers:
  p: {kind: scripted}
agents:
  helper:
    provider: p
    skills: SKILLS
"""


def write_flow(folder: Path, skills: str = "all", paths: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "flow.yaml"
    file.write_text(FLOW.replace("PATHS", paths).replace("SKILLS", skills))
    return file


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's skills folder, chosen by ROOST_USER_SKILLS."""
    folder = tmp_path / "user-config" / "skills"
    folder.mkdir(parents=True)
    monkeypatch.setenv("ROOST_USER_SKILLS", str(folder))
    return folder


def found(flow_file: Path) -> dict[str, tuple[str, str]]:
    """name -> (description, where it was found) of every skill the flow finds."""
    result = find_skills(roost.load_flow(flow_file))
    assert result.problems == []
    return {name: (s.description, s.source) for name, s in result.skills.items()}


def test_skills_are_found_in_each_of_the_three_places(tmp_path: Path, user: Path) -> None:
    project = tmp_path / "project"
    write_skill(project / "skills", "tea", "Brewing tea.")
    write_skill(tmp_path / "shared", "coffee", "Brewing coffee.")
    write_skill(user, "cocoa", "Making cocoa.")
    flow = write_flow(project, paths="../shared")
    assert found(flow) == {
        "tea": ("Brewing tea.", "flow"),
        "coffee": ("Brewing coffee.", "../shared"),
        "cocoa": ("Making cocoa.", "user"),
    }


def test_the_nearer_skill_wins_a_name_clash(tmp_path: Path, user: Path) -> None:
    project = tmp_path / "project"
    write_skill(project / "skills", "tea", "From the flow's folder.")
    for place in ("first", "second"):
        write_skill(tmp_path / place, "tea", f"From {place}.")
        write_skill(tmp_path / place, "coffee", f"From {place}.")
    write_skill(user, "tea", "From the user.")
    write_skill(user, "coffee", "From the user.")
    write_skill(user, "cocoa", "From the user.")
    flow = write_flow(project, paths="../first, ../second")
    assert found(flow) == {
        "tea": ("From the flow's folder.", "flow"),
        "coffee": ("From first.", "../first"),
        "cocoa": ("From the user.", "user"),
    }


def test_a_skill_paths_entry_may_be_one_skill_folder(tmp_path: Path, user: Path) -> None:
    write_skill(tmp_path / "elsewhere", "tea", "Brewing tea.")
    flow = write_flow(tmp_path / "project", paths="../elsewhere/tea")
    assert found(flow) == {"tea": ("Brewing tea.", "../elsewhere/tea")}


def test_the_user_folder_is_platformdirs_config_folder_without_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("ROOST_USER_SKILLS")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert user_skills_folder() == tmp_path / "config" / "roost" / "skills"


def test_a_skill_body_is_what_follows_the_front_matter(tmp_path: Path) -> None:
    file = write_skill(tmp_path, "tea", "Brewing tea.", body="\n1. Boil water.\n2. Wait.\n")
    assert skill_body(file) == "1. Boil water.\n2. Wait."


def test_a_multi_line_description_is_one_line(tmp_path: Path, user: Path) -> None:
    (tmp_path / "skills" / "tea").mkdir(parents=True)
    (tmp_path / "skills" / "tea" / "SKILL.md").write_text(
        "---\nname: tea\ndescription: >\n  Brewing tea,\n  green or black.\n---\nBoil.\n"
    )
    assert found(write_flow(tmp_path)) == {"tea": ("Brewing tea, green or black.", "flow")}


def test_the_limits_of_a_skill_file_are_allowed_up_to_their_last_unit(
    tmp_path: Path, user: Path
) -> None:
    """A description of exactly MAX_DESCRIPTION characters and a file of exactly
    MAX_SKILL_BYTES bytes are read; one character or byte more is refused."""
    longest = "d" * MAX_DESCRIPTION
    head = f"---\nname: tea\ndescription: {longest}\n---\n"
    file = tmp_path / "skills" / "tea" / "SKILL.md"
    file.parent.mkdir(parents=True)
    file.write_text(head + "b" * (MAX_SKILL_BYTES - len(head)))
    assert found(write_flow(tmp_path)) == {"tea": (longest, "flow")}
    assert skill_body(file) == "b" * (MAX_SKILL_BYTES - len(head))
    file.write_text(head + "b" * (MAX_SKILL_BYTES - len(head) + 1))
    with pytest.raises(FlowError, match="larger than 256 KiB"):
        read_skill(file, "flow")


# --------------------------------------------------------------------------- bad input

BAD_SKILLS = [
    ("Boil water.\n", 1, 1, "no front matter"),
    ("---\nname: tea\ndescription: x\n", 1, 1, "no closing line '---'"),
    ("---\n---\nBoil.\n", 2, 1, "the front matter is empty"),
    ("---\nname: tea\ndescription: [brewing\n---\n", 4, 1, "invalid YAML"),
    ("---\ndescription: Brewing tea.\n---\n", 2, 1, "no 'name'"),
    ("---\nname: tea\n---\n", 2, 1, "no 'description'"),
    ("---\nname: 12\ndescription: x\n---\n", 2, 7, "name must be text"),
    ("---\nname: a tea\ndescription: x\n---\n", 2, 7, "skill name 'a tea'"),
    ("---\n- name\n---\n", 2, 1, "must be keys"),
    ("---\nname: tea\nname: tea\ndescription: x\n---\n", 3, 1, "duplicate key 'name'"),
    (
        "---\nname: !!python/object/apply:os.system [echo hi]\ndescription: x\n---\n",
        2,
        7,
        "not allowed",
    ),
    ("---\nname: tea\ndescription: " + "x" * 1100 + "\n---\n", 3, 14, "longer than 1024"),
]


@pytest.mark.parametrize(
    ("text", "line", "col", "words"), BAD_SKILLS, ids=[w for *_, w in BAD_SKILLS]
)
def test_a_broken_skill_file_is_one_located_line_and_exit_2(
    tmp_path: Path, user: Path, text: str, line: int, col: int, words: str
) -> None:
    write_flow(tmp_path)
    (tmp_path / "skills" / "tea").mkdir(parents=True)
    (tmp_path / "skills" / "tea" / "SKILL.md").write_text(text)
    done = run_cli("validate", "flow.yaml", cwd=tmp_path)
    assert done.returncode == 2
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    assert lines[0].startswith(f"skills/tea/SKILL.md:{line}:{col}: error: "), lines[0]
    assert words in lines[0]
    assert "Traceback" not in done.stderr


def test_a_listed_skill_whose_file_is_broken_is_told_once(tmp_path: Path, user: Path) -> None:
    write_flow(tmp_path, skills="[tea]")
    (tmp_path / "skills" / "tea").mkdir(parents=True)
    (tmp_path / "skills" / "tea" / "SKILL.md").write_text("---\nname: tea\n---\n")
    done = run_cli("validate", "flow.yaml", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (
        2,
        "skills/tea/SKILL.md:2:1: error: the front matter has no 'description'\n",
    )


def test_a_skill_file_that_is_not_utf8_is_located(tmp_path: Path, user: Path) -> None:
    write_flow(tmp_path)
    (tmp_path / "skills" / "tea").mkdir(parents=True)
    (tmp_path / "skills" / "tea" / "SKILL.md").write_bytes(b"---\nname: t\xe9a\n---\n")
    with pytest.raises(FlowError) as caught:
        roost.load_flow(tmp_path / "flow.yaml")
    assert str(caught.value).endswith("SKILL.md:2:1: error: invalid UTF-8 (byte 0xe9)")


def test_two_broken_skills_are_two_lines(tmp_path: Path, user: Path) -> None:
    write_flow(tmp_path)
    for name in ("a", "b"):
        (tmp_path / "skills" / name).mkdir(parents=True)
        (tmp_path / "skills" / name / "SKILL.md").write_text("Boil.\n")
    done = run_cli("validate", "flow.yaml", cwd=tmp_path)
    assert [line.split(": error:")[0] for line in done.stdout.splitlines()] == [
        "skills/a/SKILL.md:1:1",
        "skills/b/SKILL.md:1:1",
    ]


def test_two_skills_of_one_name_in_one_folder_are_refused(tmp_path: Path, user: Path) -> None:
    write_flow(tmp_path)
    write_skill(tmp_path / "skills", "tea", "Brewing tea.")
    (tmp_path / "skills" / "tea2").mkdir()
    (tmp_path / "skills" / "tea2" / "SKILL.md").write_text("---\nname: tea\ndescription: x\n---\n")
    done = run_cli("validate", "flow.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout.startswith("skills/tea2/SKILL.md:1:1: error: a second skill named 'tea'")


def test_an_unknown_skill_is_located_with_a_hint(tmp_path: Path, user: Path) -> None:
    write_skill(tmp_path / "skills", "tea-guide", "Brewing tea.")
    write_flow(tmp_path, skills="[tea-guide, tea-guid]")
    done = run_cli("validate", "flow.yaml", cwd=tmp_path)
    assert done.returncode == 2
    (line,) = done.stdout.splitlines()
    assert line.startswith(
        "flow.yaml:9:25: error: agent 'helper': no skill named 'tea-guid' "
        "(did you mean 'tea-guide'?); skills are looked for in skills/, "
    )
    assert line.endswith(f", {user}/")


def test_run_refuses_an_unknown_skill_before_it_starts(tmp_path: Path, user: Path) -> None:
    write_flow(tmp_path, skills="[tea]")
    done = run_cli("run", "flow.yaml", "--events", "run.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("flow.yaml:9:14: error: agent 'helper': no skill named 'tea'")
    assert not (tmp_path / "run.jsonl").exists()


def test_a_skill_paths_entry_that_is_no_folder_is_located(tmp_path: Path, user: Path) -> None:
    write_flow(tmp_path, paths="shared, missing")
    (tmp_path / "shared").mkdir()
    with pytest.raises(FlowError) as caught:
        roost.load_flow(tmp_path / "flow.yaml")
    assert [str(p) for p in caught.value.errors] == [
        f"{tmp_path / 'flow.yaml'}:3:23: error: skill_paths entry 'missing' is not a folder"
    ]


def test_a_flow_without_skills_reads_no_skill_folder(tmp_path: Path, user: Path) -> None:
    (tmp_path / "skills" / "broken").mkdir(parents=True)
    (tmp_path / "skills" / "broken" / "SKILL.md").write_text("no front matter\n")
    (tmp_path / "flow.yaml").write_text(
        "roost: 1\nproviders: {p: {kind: scripted}}\nagents: {a: {provider: p}}\n"
    )
    assert run_cli("validate", "flow.yaml", cwd=tmp_path).returncode == 0
