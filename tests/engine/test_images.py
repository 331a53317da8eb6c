"""Images in messages from the command line and the flow: checked, kept once by hash, replayed."""

from __future__ import annotations

import base64
import json
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from roost.context_window import IMAGE_CHARS
from roost.engine.images import MAX_IMAGE_BYTES, load_image
from roost.engine.replay import replay_run
from roost.events import ImageRecord, MessageEvent, RunStartEvent
from roost.ports import MemoryImages
from roost.runstate import fold
from roost.store.jsonl import JsonlLog
from tests.cli_inprocess import Ran, run_cli
from tests.pictures import GIF, digest, png
from tests.store.conftest import start_event

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

FLOW = """
roost: 1
name: look
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [a red square, a dot, TERMINATE]}
agents:
  USER: {interrupt: ALWAYS}
  viewer: {role: You describe pictures.}
start: {from: USER, to: viewer, content: What is this?, images: [red.png]}
"""

RED = png((200, 30, 30))


def roost(*args: str, cwd: Path) -> Ran:
    result = run_cli(*args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "red.png").write_bytes(RED)
    (tmp_path / "dot.gif").write_bytes(GIF)
    (tmp_path / "look.yaml").write_text(FLOW)
    return tmp_path


def events_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def stored_images(folder: Path) -> list[tuple[str, str, int]]:
    """The rows of the store's images table (none when the store or the table is not there)."""
    db = folder / ".roost" / "roost.db"
    if not db.exists():
        return []
    with sqlite3.connect(db) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        if "images" not in tables:
            return []
        return list(connection.execute("SELECT hash, media_type, size FROM images"))


def stored_runs(folder: Path) -> int:
    db = folder / ".roost" / "roost.db"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as connection:
        return int(connection.execute("SELECT count(*) FROM runs").fetchone()[0])


# ---------------------------------------------------------------------- kept by hash


def test_the_flows_start_images_are_kept_once_by_hash_and_named_in_the_event(
    folder: Path,
) -> None:
    events = folder / "run.jsonl"
    result = roost("run", "look.yaml", "--events", str(events), cwd=folder)
    assert result.returncode == 0, result.stderr
    start = events_of(events)[1]
    assert start["type"] == "message"
    assert start["images"] == [{"hash": digest(RED), "media_type": "image/png", "name": "red.png"}]
    assert stored_images(folder) == [(digest(RED), "image/png", len(RED))]
    # The run file keeps its images in a folder beside it, one file per hash.
    kept = folder / "run.images" / digest(RED).removeprefix("sha256:")
    assert kept.read_bytes() == RED
    # A message without images has no images field at all.
    assert "images" not in events_of(events)[3]


def test_the_same_image_twice_is_kept_once(folder: Path) -> None:
    events = folder / "run.jsonl"
    args = ("--image", "red.png", "--image", "red.png", "--events", str(events))
    assert roost("run", "look.yaml", *args, cwd=folder).returncode == 0
    assert roost("run", "look.yaml", "--image", "red.png", cwd=folder).returncode == 0
    assert stored_runs(folder) == 2
    assert stored_images(folder) == [(digest(RED), "image/png", len(RED))]
    assert [p.name for p in (folder / "run.images").iterdir()] == [digest(RED)[7:]]
    start = events_of(events)[1]
    assert [image["hash"] for image in start["images"]] == [digest(RED)] * 2


def test_continue_sends_images_with_the_answer(folder: Path) -> None:
    events = folder / "run.jsonl"
    assert roost("run", "look.yaml", "--events", str(events), cwd=folder).returncode == 0
    args = ("--answer", "and this?", "--image", "dot.gif")
    result = roost("continue", str(events), *args, "--no-input", cwd=folder)
    assert result.returncode == 0, result.stderr
    lines = events_of(events)
    resume = next(e for e in lines if e["type"] == "resume")
    answer = next(e for e in lines if e["type"] == "message" and e["content"] == "and this?")
    record = {"hash": digest(GIF), "media_type": "image/gif", "name": "dot.gif"}
    assert resume["images"] == [record] and answer["images"] == [record]
    assert sorted(row[0] for row in stored_images(folder)) == sorted([digest(RED), digest(GIF)])


def test_continue_sends_images_with_its_first_answer_only(folder: Path) -> None:
    events = folder / "run.jsonl"
    assert roost("run", "look.yaml", "--events", str(events), cwd=folder).returncode == 0
    args = ("--answer", "and this?", "--answer", "thanks", "--image", "dot.gif")
    result = roost("continue", str(events), *args, "--no-input", cwd=folder)
    assert result.returncode == 0, result.stderr
    resumes = [e for e in events_of(events) if e["type"] == "resume"]
    assert [(e["feedback"], len(e.get("images") or ())) for e in resumes] == [
        ("and this?", 1),
        ("thanks", 0),
    ]


def test_images_go_with_an_answers_text(folder: Path) -> None:
    events = folder / "run.jsonl"
    assert roost("run", "look.yaml", "--events", str(events), cwd=folder).returncode == 0
    before = events.read_text()
    args = ("--answer", "", "--image", "dot.gif")
    result = roost("continue", str(events), *args, cwd=folder)
    assert result.returncode == 2
    run_id = events_of(events)[0]["run"]
    assert result.stderr.strip().splitlines() == [
        f"run {run_id}: images go with an answer; give the answer's text too"
    ]
    assert events.read_text() == before
    assert [row[0] for row in stored_images(folder)] == [digest(RED)]  # the GIF was not kept


# ---------------------------------------------------------------------- replay


def test_replay_is_identical_and_reads_the_images_from_the_store(folder: Path) -> None:
    events = folder / "run.jsonl"
    assert roost("run", "look.yaml", "--events", str(events), cwd=folder).returncode == 0
    args = ("--answer", "and this?", "--image", "dot.gif")
    assert roost("continue", str(events), *args, "--no-input", cwd=folder).returncode == 0
    run_id = events_of(events)[0]["run"]
    for ref in (run_id, str(events)):
        result = roost("replay", ref, cwd=folder)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "identical" in result.stdout


async def test_a_replayed_request_is_rebuilt_with_the_stored_bytes(folder: Path) -> None:
    events = folder / "run.jsonl"
    assert roost("run", "look.yaml", "--events", str(events), cwd=folder).returncode == 0
    recorded = JsonlLog(events).load()
    call = next(e for e in recorded if e.type == "llm_call")
    store = MemoryImages()
    store.put(digest(RED), "image/png", RED)
    report = await replay_run(None, recorded, capture=call.seq, images=store)
    assert report.identical and report.request is not None
    (shown,) = report.request.messages[0].images  # type: ignore[union-attr]
    assert (shown.hash, base64.b64decode(shown.data)) == (digest(RED), RED)
    # Without the bytes, the request cannot be built again.
    empty = await replay_run(None, recorded, capture=call.seq, images=MemoryImages())
    assert empty.request is None or not empty.identical


def test_a_changed_image_hash_changes_the_request_digest(folder: Path) -> None:
    events = folder / "run.jsonl"
    assert roost("run", "look.yaml", "--events", str(events), cwd=folder).returncode == 0
    other = png((0, 0, 255))
    edited = folder / "edited.jsonl"
    edited.write_text(events.read_text().replace(digest(RED), digest(other)))
    result = roost("replay", str(edited), cwd=folder)
    assert result.returncode == 4
    assert "diverged at event 2" in result.stdout  # the llm_call: its request_digest differs


# ---------------------------------------------------------------------- bad input


def big_png(tmp_path: Path) -> Path:
    path = tmp_path / "big.png"
    path.write_bytes(RED[:33] + b"\x00" * MAX_IMAGE_BYTES)  # a PNG's header, then too much
    return path


NOT_AN_IMAGE = "not a PNG, JPEG, GIF or WebP image"


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("notes.png", b"plain words", f"notes.png: {NOT_AN_IMAGE} (its bytes are no known type)"),
        (
            "doc.pdf",
            b"%PDF-1.4\n%\xe2\xe3",
            f"doc.pdf: {NOT_AN_IMAGE} (it looks like application/pdf)",
        ),
        ("missing.png", None, "missing.png: no such image file"),
    ],
)
def test_a_bad_image_is_one_line_and_nothing_is_stored(
    folder: Path, name: str, content: bytes | None, message: str
) -> None:
    if content is not None:
        (folder / name).write_bytes(content)
    result = roost("run", "look.yaml", "--image", name, "--events", "run.jsonl", cwd=folder)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"--image {message}"]
    assert stored_runs(folder) == 0 and stored_images(folder) == []
    assert not (folder / "run.jsonl").exists() and not (folder / "run.images").exists()


def test_an_image_over_the_size_limit_is_refused(folder: Path) -> None:
    big_png(folder)
    result = roost("run", "look.yaml", "--image", "big.png", cwd=folder)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"--image big.png: over the image size limit of {MAX_IMAGE_BYTES:,} bytes"
    ]
    assert stored_runs(folder) == 0


def test_a_missing_start_image_is_located_in_the_flow(folder: Path) -> None:
    (folder / "red.png").unlink()
    result = roost("run", "look.yaml", cwd=folder)
    assert result.returncode == 2
    line = next(i for i, text in enumerate(FLOW.splitlines()) if "images:" in text)
    column = FLOW.splitlines()[line].index("red.png") + 1
    assert result.stderr.strip().splitlines() == [
        f"look.yaml:{line + 1}:{column}: error: start.images[0]: red.png: no such image file"
    ]
    assert stored_runs(folder) == 0


def test_a_start_image_that_is_neither_a_path_nor_a_web_url_is_a_flow_error(
    folder: Path,
) -> None:
    (folder / "look.yaml").write_text(FLOW.replace("[red.png]", "[file:///etc/passwd]"))
    result = roost("validate", "look.yaml", cwd=folder)
    assert result.returncode == 2
    assert "start.images[0]: file:// is not fetched; give a file path or an http(s) URL" in (
        result.stdout + result.stderr
    )


# ---------------------------------------------------------------------- URLs


class _Pictures(BaseHTTPRequestHandler):
    files = {"/red.png": RED, "/page.html": b"<!doctype html><p>not a picture</p>"}

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = self.files.get(self.path.split("?")[0])
        self.send_response(200 if body is not None else 404)
        self.end_headers()
        self.wfile.write(body or b"")


@pytest.fixture
def web() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pictures)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_url_in_start_images_is_fetched_and_kept_by_hash(folder: Path, web: str) -> None:
    url = f"{web}/red.png?token=hidden"
    (folder / "look.yaml").write_text(FLOW.replace("[red.png]", f'["{url}"]'))
    events = folder / "run.jsonl"
    result = roost("run", "look.yaml", "--events", str(events), cwd=folder)
    assert result.returncode == 0, result.stderr
    (image,) = events_of(events)[1]["images"]
    # The record names the URL without its query, which may hold a secret.
    assert image == {"hash": digest(RED), "media_type": "image/png", "name": f"{web}/red.png"}
    assert "hidden" not in json.dumps(events_of(events)[1:])  # the flow's text has it as written
    assert stored_images(folder) == [(digest(RED), "image/png", len(RED))]


@pytest.mark.parametrize(
    ("path", "why"),
    [("/page.html", "not a PNG, JPEG, GIF or WebP image"), ("/gone.png", "answered HTTP 404")],
)
def test_a_bad_url_is_one_located_line(folder: Path, web: str, path: str, why: str) -> None:
    (folder / "look.yaml").write_text(FLOW.replace("[red.png]", f'["{web}{path}"]'))
    result = roost("run", "look.yaml", cwd=folder)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("look.yaml:") and f"start.images[0]: {web}{path}: " in line
    assert why in line
    assert stored_runs(folder) == 0


def test_load_image_reads_paths_relative_to_a_folder(folder: Path) -> None:
    image = load_image("dot.gif", folder)
    assert (image.name, image.media_type, image.digest) == ("dot.gif", "image/gif", digest(GIF))


def test_an_image_counts_towards_the_size_of_the_conversation() -> None:
    def sized(images: tuple[ImageRecord, ...] | None) -> int:
        said = MessageEvent.model_validate(
            {"seq": 1, "run": "r", "ts": "t", "from": "USER", "to": "bot", "content": "look"}
        ).model_copy(update={"images": images})
        start: RunStartEvent = start_event("r")
        return fold([start, said]).pair_thread("USER", "bot").sizes[-1]

    image = ImageRecord(hash=digest(RED), media_type="image/png")
    assert sized((image, image)) - sized(None) == 2 * IMAGE_CHARS


def test_a_fork_of_a_run_file_takes_the_images_it_shares(folder: Path) -> None:
    events = folder / "run.jsonl"
    assert roost("run", "look.yaml", "--events", str(events), cwd=folder).returncode == 0
    result = roost("fork", str(events), "--at", "2", "--no-input", cwd=folder)
    assert result.returncode == 0, result.stderr
    (fork,) = [p for p in folder.glob("*.jsonl") if p != events]
    kept = folder / f"{fork.stem}.images" / digest(RED).removeprefix("sha256:")
    assert kept.read_bytes() == RED
    page = folder / "fork.html"
    assert (
        roost("render", "look.yaml", "--run", str(fork), "-o", str(page), cwd=folder).returncode
        == 0
    )
    assert base64.b64encode(RED).decode() in page.read_text()
