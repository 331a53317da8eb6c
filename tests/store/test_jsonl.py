"""JsonlLog: a run's events in a JSON Lines file."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roost.errors import ConcurrentRunError, EventLogError
from roost.events import MessageEvent, event_json
from roost.store.jsonl import JsonlLog

if TYPE_CHECKING:
    from pathlib import Path


def message(seq: int, run: str = "r1", content: str = "hi") -> MessageEvent:
    return MessageEvent.model_validate(
        {
            "seq": seq,
            "run": run,
            "ts": "2026-01-01T00:00:00Z",
            "from": "a",
            "to": "b",
            "content": content,
        }
    )


def test_append_then_load_round_trips(tmp_path: Path) -> None:
    log = JsonlLog(tmp_path / "run.jsonl", "r1")
    log.append([message(0), message(1, content="second")])
    log.append([message(2)])
    loaded = JsonlLog(tmp_path / "run.jsonl").load()
    assert [e.seq for e in loaded] == [0, 1, 2]
    assert loaded[1] == message(1, content="second")


def test_each_append_is_on_disk_at_once(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    log = JsonlLog(path, "r1")
    log.append([message(0)])
    assert path.read_text() == event_json(message(0)) + "\n"


def test_run_id_read_from_the_file(tmp_path: Path) -> None:
    JsonlLog(tmp_path / "run.jsonl", "abc").append([message(0, run="abc")])
    assert JsonlLog(tmp_path / "run.jsonl").run_id == "abc"


def test_run_id_of_an_empty_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(EventLogError, match="no run id"):
        _ = JsonlLog(tmp_path / "none.jsonl").run_id


def test_missing_file_loads_as_empty(tmp_path: Path) -> None:
    assert JsonlLog(tmp_path / "none.jsonl", "r1").load() == []


def test_torn_last_line_is_ignored_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    whole = event_json(message(0)) + "\n" + event_json(message(1))[:20]
    path.write_text(whole)
    log = JsonlLog(path)
    assert [e.seq for e in log.load()] == [0]
    assert len(log.warnings) == 1 and "run.jsonl:2" in log.warnings[0]


def test_invalid_terminated_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(event_json(message(0)) + "\n{broken\n")
    log = JsonlLog(path)
    assert len(log.load()) == 1
    assert "torn" in log.warnings[0]


def test_append_after_a_torn_line_cuts_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(event_json(message(0)) + "\n" + '{"seq": 1, "ru')
    log = JsonlLog(path)
    log.load()
    log.append([message(1)])
    fresh = JsonlLog(path)
    assert [e.seq for e in fresh.load()] == [0, 1]
    assert fresh.warnings == []


def test_invalid_line_in_the_middle_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(event_json(message(0)) + "\nnot json\n" + event_json(message(1)) + "\n")
    with pytest.raises(EventLogError, match=r"run\.jsonl:2: not JSON"):
        JsonlLog(path).load()


def test_unknown_type_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    bad = json.dumps({"seq": 1, "run": "r1", "ts": "x", "type": "nope"})
    path.write_text(event_json(message(0)) + "\n" + bad + "\n" + event_json(message(2)) + "\n")
    with pytest.raises(EventLogError, match=r"run\.jsonl:2: event type .nope. is unknown"):
        JsonlLog(path).load()


def test_seq_gap_in_the_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("".join(event_json(message(s)) + "\n" for s in (0, 2, 3)))
    with pytest.raises(EventLogError, match=r"run\.jsonl:2: event seq 2 where 1"):
        JsonlLog(path).load()


def test_events_of_another_run_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    lines = [event_json(message(0)), event_json(message(1, run="other")), event_json(message(2))]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(EventLogError, match=r"run\.jsonl:2: event of run 'other'"):
        JsonlLog(path).load()


def test_wrong_seq_on_append_is_a_concurrent_run_error(tmp_path: Path) -> None:
    log = JsonlLog(tmp_path / "run.jsonl", "r1")
    log.append([message(0)])
    with pytest.raises(ConcurrentRunError):
        log.append([message(0)])


def test_a_second_writer_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    first, second = JsonlLog(path, "r1"), JsonlLog(path, "r1")
    first.append([message(0)])
    second.load()
    first.append([message(1)])
    with pytest.raises(ConcurrentRunError):
        second.append([message(1)])
    assert [e.seq for e in JsonlLog(path).load()] == [0, 1]


def test_writer_that_did_not_load_continues_after_existing_events(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    JsonlLog(path, "r1").append([message(0)])
    later = JsonlLog(path, "r1")
    later.append([message(1)])
    assert len(JsonlLog(path).load()) == 2


def test_unwritable_path_is_an_event_log_error(tmp_path: Path) -> None:
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(EventLogError, match="cannot"):
        JsonlLog(tmp_path / "dir.jsonl", "r1").append([message(0)])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batches=st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=6),
    cut=st.floats(min_value=0, max_value=1),
)
def test_a_file_cut_anywhere_loads_a_clean_prefix(
    tmp_path: Path, batches: list[int], cut: float
) -> None:
    path = tmp_path / f"cut-{len(batches)}-{cut}.jsonl"
    path.unlink(missing_ok=True)
    log = JsonlLog(path, "r1")
    seq = 0
    for size in batches:
        log.append([message(seq + i, content=f"é{seq + i}" * 3) for i in range(size)])
        seq += size
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * cut)])
    reader = JsonlLog(path, "r1")
    loaded = reader.load()
    assert [e.seq for e in loaded] == list(range(len(loaded)))
    assert len(reader.warnings) <= 1
    reader.append([message(len(loaded))])  # a resumed writer goes on cleanly
    assert [e.seq for e in JsonlLog(path).load()] == list(range(len(loaded) + 1))


def test_a_whole_last_line_of_an_unknown_type_is_refused_never_cut(tmp_path: Path) -> None:
    # Section 7 lets later versions add event types: such a line is no torn write.
    path = tmp_path / "run.jsonl"
    newer = json.dumps({"seq": 1, "run": "r1", "ts": "t", "type": "note", "text": "hi"})
    path.write_text(event_json(message(0)) + "\n" + newer + "\n")
    before = path.read_bytes()
    with pytest.raises(EventLogError, match=r"run\.jsonl:2: event type 'note' is unknown"):
        JsonlLog(path).load()
    log = JsonlLog(path, "r1")
    with pytest.raises(EventLogError):
        log.append([message(1)])
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "line", ['{"seq": ' + "9" * 5000 + "}", "[" * 100_000 + "]" * 100_000], ids=["digits", "deep"]
)
def test_lines_python_cannot_read_are_one_error_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(line + "\n" + event_json(message(0)) + "\n")
    with pytest.raises(EventLogError) as caught:
        JsonlLog(path).load()
    assert str(caught.value).startswith(f"{path}:1: not JSON") and "\n" not in str(caught.value)


def test_a_whole_last_event_without_its_newline_is_kept_and_appended_after(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(event_json(message(seq)) for seq in range(3)))  # no final newline
    log = JsonlLog(path)
    assert [e.seq for e in log.load()] == [0, 1, 2] and log.warnings == []
    log.append([message(3), message(4)])
    fresh = JsonlLog(path)
    assert [e.seq for e in fresh.load()] == [0, 1, 2, 3, 4] and fresh.warnings == []
    assert path.read_text().splitlines() == [event_json(message(seq)) for seq in range(5)]


def test_a_log_that_never_read_the_file_appends_after_a_last_line_without_newline(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(event_json(message(0)))
    JsonlLog(path, "r1").append([message(1)])  # the append reads the file under its lock
    assert [e.seq for e in JsonlLog(path).load()] == [0, 1]
