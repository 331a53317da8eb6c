"""The events reference (docs/events.md) says what roost writes: every type, field and line.

Each section's field table is checked against the event's model (which fields are
always written, which may be null, which are left out without a value), each
example line against the model that parses it, and the example lines against
the events the page's own commands write when run again.
"""

from __future__ import annotations

import io
import json
import re
import shlex
from typing import TYPE_CHECKING, Any, get_args

import pytest

from roost.cli import main
from roost.events import Event, event_json, parse_event
from tests.docs_blocks import ROOT, page, tables, write_files

if TYPE_CHECKING:
    from pathlib import Path

    from pydantic import BaseModel

DOC = ROOT / "docs" / "events.md"
COMMON = ("seq", "type", "run", "ts")
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def _models() -> dict[str, type[BaseModel]]:
    union = get_args(Event)[0]
    return {model.model_fields["type"].default: model for model in get_args(union)}


MODELS = _models()
BLOCKS = page("events.md")


def _section(name: str) -> str:
    return f"`{name}`"


def _written(model: type[BaseModel]) -> dict[str, str]:
    """How the model writes each of its own fields, in the page's words."""
    found = {}
    for name, info in model.model_fields.items():
        field = info.alias or name
        if field in COMMON:
            continue
        if getattr(info, "exclude_if", None) is not None:
            found[field] = "only with a value"
        elif not info.is_required() and info.default is None:
            found[field] = "always, may be null"
        else:
            found[field] = "always"
    return found


def _table(heading: str) -> dict[str, str]:
    rows = [rows for under, rows in tables(DOC) if under == heading]
    assert len(rows) == 1, f"one field table under {heading}"
    return {cells[0].strip("`"): cells[1] for cells in rows[0]}


def _examples() -> list[tuple[str, str]]:
    """(type the section documents, JSON line) for every example line of the page."""
    found = []
    for block in BLOCKS:
        if block.lang == "json":
            found += [(block.heading.strip("`"), line) for line in block.text.splitlines()]
    return found


EXAMPLES = _examples()


def test_every_event_type_has_a_section() -> None:
    sections = {block.heading.strip("`") for block in BLOCKS if block.lang == "json"}
    assert sections == set(MODELS)


def test_the_fields_every_event_has_are_listed() -> None:
    assert _table("Every event") == dict.fromkeys(COMMON, "always")
    for model in MODELS.values():
        assert set(COMMON) <= {info.alias or name for name, info in model.model_fields.items()}


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_each_section_lists_every_field_as_roost_writes_it(kind: str) -> None:
    assert _table(_section(kind)) == _written(MODELS[kind])


@pytest.mark.parametrize(
    ("kind", "line"), EXAMPLES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(EXAMPLES)]
)
def test_each_example_line_is_the_event_its_section_documents(kind: str, line: str) -> None:
    event = parse_event(line)
    assert event.type == kind
    assert event.model_extra == {}, "a field the model does not know"
    assert event_json(event) == line, "roost writes this event otherwise"
    assert ISO_UTC.match(event.ts)


# Sections whose example comes from a run of their own (a flow and a command beside it).
OWN_RUN = {
    "compact": "compact.jsonl",
    "memory": "memory.jsonl",
    "skills": "skills.jsonl",
    "hook": "hook.jsonl",
    "background": "background.jsonl",
    "budget": "budget.jsonl",
}


def _commands(heading: str | None = None) -> list[list[str]]:
    """The `$ roost ...` lines of the run behind the examples (or of a section's own run)."""
    found = []
    for block in BLOCKS:
        under = block.heading.strip("`")
        if block.lang == "console" and (
            under == heading or (heading is None and under not in OWN_RUN)
        ):
            found += [
                shlex.split(line[2:]) for line in block.text.splitlines() if line.startswith("$ ")
            ]
    return found


def _flow_files(folder: Path) -> None:
    """The run's flow, and its fixed copy: the flow with the line the page shows changed."""
    flow = next(b for b in BLOCKS if b.marker == "runnable" and b.lang == "yaml")
    after = BLOCKS[BLOCKS.index(flow) + 1 :]
    fixed_line = next(b for b in after if b.lang == "yaml").text.rstrip("\n")
    key = fixed_line.split(":")[0] + ":"
    lines = flow.text.splitlines(keepends=True)
    changed = [fixed_line + "\n" if line.startswith(key) else line for line in lines]
    assert changed != lines
    (folder / flow.setting("file", "flow.yaml")).write_text(flow.text)
    (folder / "events-demo-fixed.yaml").write_text("".join(changed))


def _same_run(data: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    """The event with its run ids named by role and its times left out (they differ per run).

    A child run's id is named wherever it appears (a background task's, in fields and text).
    """
    data = {key: value for key, value in data.items() if key not in ("ts", "memory_at")}
    for key in ("run", "parent"):
        if key in data:
            data[key] = ids.get(data[key], data[key])
    child = data.get("child_run") or (data.get("background") or {}).get("child_run")
    if child:
        data = json.loads(json.dumps(data).replace(child, "CHILD"))
    return data


def _roost(args: list[str]) -> int:
    """The command line's exit status for ``roost ARGS``, run in this process."""
    try:
        main(args)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


@pytest.fixture(scope="module")
def written(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The events of run.jsonl and the fork's first event, after the page's commands."""
    folder = tmp_path_factory.mktemp("events-page")
    _flow_files(folder)
    commands = _commands()
    assert [args[:2] for args in commands] == [
        ["roost", "run"],
        ["roost", "retry"],
        ["roost", "fork"],
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.setenv("ROOST_DB", str(folder / "roost.db"))
        patch.setattr("sys.stdin", io.StringIO(""))
        for args in commands:
            assert _roost(args[1:]) in (0, 3), args  # 3: the run stopped at an error
    run = [json.loads(line) for line in (folder / "run.jsonl").read_text().splitlines()]
    fork_file = next(folder.glob("run-fork-*.jsonl"))
    return run, json.loads(fork_file.read_text().splitlines()[0])


def test_the_example_lines_are_what_the_pages_commands_write(
    written: tuple[list[dict[str, Any]], dict[str, Any]],
) -> None:
    run, fork_start = written
    ids = {run[0]["run"]: "RUN", fork_start["run"]: "FORK"}
    documented_ids: dict[str, str] = {}
    shared = [(kind, line) for kind, line in EXAMPLES if kind not in OWN_RUN]
    for _, line in shared:
        data = json.loads(line)
        documented_ids.setdefault(data["run"], "FORK" if "parent" in data else "RUN")
    for _, line in shared:
        data = json.loads(line)
        real = fork_start if "parent" in data else run[data["seq"]]
        shown = json.dumps(real, separators=(",", ":"), ensure_ascii=False)
        assert _same_run(data, documented_ids) == _same_run(real, ids), (
            f"docs/events.md should show:\n{shown}"
        )


def test_the_fork_sees_the_memory_of_its_last_shared_event(
    written: tuple[list[dict[str, Any]], dict[str, Any]],
) -> None:
    run, fork_start = written
    assert fork_start["memory_at"] == run[fork_start["fork_at"] - 1]["ts"]
    documented = next(
        json.loads(line) for kind, line in EXAMPLES if kind == "run_start" and "parent" in line
    )
    shown = [line for kind, line in EXAMPLES if kind != "run_start" and '"seq":4,' in line]
    assert [json.loads(line)["ts"] for line in shown] == [documented["memory_at"]]


def test_the_table_of_the_run_names_each_of_its_events(
    written: tuple[list[dict[str, Any]], dict[str, Any]],
) -> None:
    rows = next(rows for under, rows in tables(DOC) if under == "The run behind the examples")
    run, _ = written
    assert [(int(cells[0]), cells[1].strip("`")) for cells in rows] == [
        (event["seq"], event["type"]) for event in run
    ]


@pytest.mark.parametrize("kind", sorted(OWN_RUN))
def test_a_sections_own_example_is_what_its_command_writes(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A flow that needs the run store (memory) is marked not runnable: only roost run runs it.
    # A section may show more than one file (a flow and its sub-flow).
    flows = [b for b in BLOCKS if b.heading.strip("`") == kind and b.lang == "yaml" and b.marker]
    for flow in flows:
        (tmp_path / flow.setting("file", "flow.yaml")).write_text(flow.text)
    write_files([b for b in BLOCKS if b.heading.strip("`") == kind], tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ROOST_DB", str(tmp_path / "roost.db"))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    commands = _commands(kind)
    assert commands and all(_roost(args[1:]) == 0 for args in commands)
    lines = (tmp_path / OWN_RUN[kind]).read_text().splitlines()
    run = [json.loads(line) for line in lines]
    shown = [json.loads(line) for under, line in EXAMPLES if under == kind]
    assert shown
    for data in shown:
        real = run[data["seq"]]
        assert _same_run(data, {data["run"]: "RUN"}) == _same_run(real, {real["run"]: "RUN"}), (
            f"docs/events.md should show:\n{lines[data['seq']]}"
        )
