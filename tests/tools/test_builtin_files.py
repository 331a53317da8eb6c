"""builtin#read_file, write_file and list_files stay inside their root, whatever the path."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest

from roost.engine import Runner
from roost.engine.replay import replay_run
from roost.errors import FlowError
from roost.events import LlmCallEvent, ToolResultEvent
from roost.loading import load_flow
from roost.ports import MemoryLog
from roost.tools import toolbox_for

from .conftest import make_flow

if TYPE_CHECKING:
    from pathlib import Path

    from roost.tools.base import Tool

FILE_TOOLS = ["builtin#read_file", "builtin#write_file", "builtin#list_files"]
SECRET = "the secret outside the root"


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """A flow folder holding ``root/`` (the tools' root) and a file beside it, outside."""
    root = tmp_path / "root"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "todo.md").write_text("buy milk\n")
    (tmp_path / "outside.txt").write_text(SECRET)
    return tmp_path


def tools(folder: Path, **files: Any) -> dict[str, Tool]:
    flow = make_flow(
        {
            "builtins": {"files": {"root": "root", **files}},
            "agents": {"a": {"functions": FILE_TOOLS}},
        },
        folder,
    )
    return {tool.spec.name.removeprefix("builtin__"): tool for tool in toolbox_for(flow)("a")}


async def call(tool: Tool, **arguments: Any) -> tuple[str, bool]:
    outcome = await tool.call(arguments)
    return outcome.content, outcome.is_error


async def test_files_inside_the_root_are_read_written_and_listed(world: Path) -> None:
    t = tools(world)
    assert await call(t["read_file"], path="notes/todo.md") == ("buy milk\n", False)
    assert await call(t["read_file"], path="notes/../notes/./todo.md") == ("buy milk\n", False)
    written = await call(t["write_file"], path="drafts/day/plan.md", content="étape 1")
    assert written == ("Wrote 8 bytes to drafts/day/plan.md.", False)
    assert (world / "root" / "drafts" / "day" / "plan.md").read_text() == "étape 1"
    await call(t["write_file"], path="drafts/day/plan.md", content="\nétape 2", append=True)
    assert (world / "root" / "drafts" / "day" / "plan.md").read_text() == "étape 1\nétape 2"
    listing, failed = await call(t["list_files"], recursive=True)
    assert not failed
    assert listing.splitlines() == [
        "drafts/",
        "drafts/day/",
        "drafts/day/plan.md (17 bytes)",
        "notes/",
        "notes/todo.md (9 bytes)",
    ]


@pytest.mark.parametrize(
    "path",
    ["..", "../outside.txt", "notes/../../outside.txt", "./../root/../outside.txt"],
)
async def test_a_path_climbing_out_with_dots_is_refused(world: Path, path: str) -> None:
    t = tools(world)
    text, failed = await call(t["read_file"], path=path)
    assert failed and "outside the root folder" in text and SECRET not in text
    text, failed = await call(t["write_file"], path=path, content="overwritten")
    assert failed and "outside the root folder" in text
    text, failed = await call(t["list_files"], path=path)
    assert failed and "outside the root folder" in text
    assert (world / "outside.txt").read_text() == SECRET


async def test_a_sibling_folder_whose_name_starts_with_the_roots_is_outside(world: Path) -> None:
    """``root2`` beside ``root`` shares the root's name as a prefix, not as a folder."""
    sibling = world / "root2"
    sibling.mkdir()
    (sibling / "x.txt").write_text(SECRET)
    (world / "root" / "door").symlink_to(sibling)
    t = tools(world)
    for path in ["../root2/x.txt", "door/x.txt"]:
        text, failed = await call(t["read_file"], path=path)
        assert failed and "outside the root folder" in text and SECRET not in text
        text, failed = await call(t["write_file"], path=path, content="overwritten")
        assert failed and "outside the root folder" in text
    text, failed = await call(t["list_files"], path="../root2")
    assert failed and "outside the root folder" in text
    assert (sibling / "x.txt").read_text() == SECRET


async def test_an_absolute_path_is_refused_even_inside_the_root(world: Path) -> None:
    t = tools(world)
    for path in [str(world / "outside.txt"), str(world / "root" / "notes" / "todo.md"), "/"]:
        text, failed = await call(t["read_file"], path=path)
        assert failed and "absolute path" in text
    text, failed = await call(t["write_file"], path=str(world / "new.txt"), content="x")
    assert failed and "absolute path" in text
    assert not (world / "new.txt").exists()


async def test_a_link_pointing_out_of_the_root_is_not_followed(world: Path) -> None:
    root = world / "root"
    (root / "leak.txt").symlink_to(world / "outside.txt")
    (root / "notes" / "up").symlink_to(world)  # a folder link out of the root
    (root / "planted.txt").symlink_to(world / "planted-outside.txt")  # dangling, outside
    t = tools(world)
    for path in ["leak.txt", "notes/up/outside.txt"]:
        text, failed = await call(t["read_file"], path=path)
        assert failed and "outside the root folder" in text and SECRET not in text
    for path in ["leak.txt", "notes/up/new.txt", "planted.txt"]:
        text, failed = await call(t["write_file"], path=path, content="overwritten")
        assert failed and "outside the root folder" in text
    text, failed = await call(t["list_files"], path="notes/up")
    assert failed and "outside the root folder" in text
    assert (world / "outside.txt").read_text() == SECRET
    assert not (world / "new.txt").exists() and not (world / "planted-outside.txt").exists()
    # The links themselves are listed, as links, never entered.
    listing, _ = await call(t["list_files"], recursive=True)
    assert "notes/up (symbolic link)" in listing and "outside.txt" not in listing


async def test_a_link_that_stays_inside_the_root_is_followed(world: Path) -> None:
    (world / "root" / "latest.md").symlink_to("notes/todo.md")
    t = tools(world)
    assert await call(t["read_file"], path="latest.md") == ("buy milk\n", False)


async def test_a_loop_of_links_is_refused_without_hanging(world: Path) -> None:
    root = world / "root"
    (root / "ping").symlink_to("pong")
    (root / "pong").symlink_to("ping")
    t = tools(world)
    for path in ["ping", "ping/deeper.txt"]:
        text, failed = await call(t["read_file"], path=path)
        assert failed and ("loop" in text or "symbolic links" in text), text
        text, failed = await call(t["write_file"], path=path, content="x")
        assert failed, text
    listing, failed = await call(t["list_files"], recursive=True)
    assert not failed and "ping (symbolic link)" in listing


async def test_reads_and_writes_over_the_size_limit_are_refused(world: Path) -> None:
    (world / "root" / "big.txt").write_text("x" * 101)
    (world / "root" / "fits.txt").write_text("y" * 100)
    t = tools(world, max_bytes=100)
    text, failed = await call(t["read_file"], path="big.txt")
    assert failed and text == "'big.txt' has 101 bytes, over the limit of 100"
    assert await call(t["read_file"], path="fits.txt") == ("y" * 100, False)
    text, failed = await call(t["write_file"], path="new.txt", content="é" * 51)  # 102 bytes
    assert failed and text == "the content has 102 bytes, over the limit of 100"
    assert not (world / "root" / "new.txt").exists()
    text, failed = await call(t["write_file"], path="fits.txt", content="z", append=True)
    assert failed and "larger than 100 bytes" in text
    assert (world / "root" / "fits.txt").read_text() == "y" * 100


async def test_a_listing_stops_at_its_limit(world: Path) -> None:
    for n in range(5):
        (world / "root" / f"f{n}.txt").write_text("")
    t = tools(world, max_entries=3)
    listing, failed = await call(t["list_files"])
    assert not failed
    assert listing.splitlines() == [
        "f0.txt (0 bytes)",
        "f1.txt (0 bytes)",
        "f2.txt (0 bytes)",
        "[more entries are not shown: the limit is 3]",
    ]


async def test_what_is_not_a_text_file_is_an_error_result(world: Path) -> None:
    root = world / "root"
    (root / "image.bin").write_bytes(b"\xff\xd8\xff\xe0")
    os.mkfifo(root / "pipe")  # opening a FIFO to read would wait for a writer forever
    t = tools(world)
    expected = {
        "image.bin": "'image.bin' is not UTF-8 text",
        "pipe": "'pipe' is not a regular file",
        "notes": "'notes' is a folder: list it with list_files",
        "missing.txt": "'missing.txt' does not exist",
        "bad\x00name": "a path cannot hold a NUL character",
    }
    for path, message in expected.items():
        assert await call(t["read_file"], path=path) == (message, True)
    assert await call(t["write_file"], path=".", content="x") == (
        "'.' is the root folder itself, not a file",
        True,
    )
    text = await call(t["write_file"], path="odd.txt", content="\ud800")
    assert text == ("the content is not valid Unicode text", True)
    text, failed = await call(t["read_file"], path=7)  # type: ignore[arg-type]
    assert failed and "invalid arguments for builtin__read_file: path: 7" in text


async def test_a_missing_root_is_an_error_result(world: Path) -> None:
    t = tools(world, root="nowhere")
    text, failed = await call(t["list_files"])
    assert failed and text == "the root folder of the file tools does not exist"


def test_a_missing_root_is_reported_where_a_file_tool_is_listed(tmp_path: Path) -> None:
    flow_file = tmp_path / "files.yaml"
    flow_file.write_text(
        "roost: 1\n"
        "builtins: {files: {root: data}}\n"
        "providers: {p: {kind: scripted}}\n"
        "agents:\n"
        "  a: {provider: p, functions: [builtin#shell, builtin#list_files]}\n"
    )
    with pytest.raises(FlowError) as caught:
        load_flow(flow_file)
    assert str(caught.value) == (
        f"{flow_file}:5:47: error: 'builtin#list_files': the root folder 'data' of the file "
        "tools is missing"
    )
    (tmp_path / "data").mkdir()
    assert load_flow(flow_file).builtins.files.root == "data"


RUN = """
roost: 1
name: reader
builtins: {files: {root: root, max_bytes: 1000}}
providers:
  script:
    kind: scripted
    replies:
      - tool_calls:
          - {name: builtin__read_file, arguments: {path: notes/todo.md}}
          - {name: builtin__list_files, arguments: {recursive: true}}
      - tool_calls:
          - {name: builtin__write_file, arguments: {path: done.md, content: milk}}
      - Read, listed and written.
agents:
  user: {interrupt: ALWAYS}
  reader:
    provider: script
    functions: [builtin#read_file, builtin#list_files, builtin#write_file]
start: {from: user, to: reader, content: What is on my list?}
"""


async def test_a_replay_answers_from_the_record_after_the_files_changed(world: Path) -> None:
    flow_file = world / "reader.yaml"
    flow_file.write_text(RUN)
    log = MemoryLog("r")
    await Runner(flow=load_flow(flow_file), log=log).start()
    results = [(e.content, e.is_error) for e in log.load() if isinstance(e, ToolResultEvent)]
    assert results == [
        ("buy milk\n", False),
        ("notes/\nnotes/todo.md (9 bytes)", False),
        ("Wrote 4 bytes to done.md.", False),
    ]
    offered = next(e for e in log.load() if isinstance(e, LlmCallEvent)).tools
    assert offered == ("builtin__read_file", "builtin__list_files", "builtin__write_file")
    (world / "root" / "notes" / "todo.md").write_text("buy bread\n")
    (world / "root" / "done.md").unlink()
    assert (await replay_run(None, log.load())).identical
    assert not (world / "root" / "done.md").exists()  # nothing was written again
