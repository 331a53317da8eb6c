"""How long a 1,000-message import takes, for each format ``roost import --from`` reads.

    python bench/import_long.py [--messages 1000] [--repeat 3]

For each format a file of ``--messages`` messages between two speakers is
written in that engine's shape (the shapes of the fixtures in
tests/fixtures/importers, which the real libraries made):

- ag2: a ``chat_history`` JSON list; ag2-group: ``GroupChat.messages`` of three
  (a channel, so a director's choice before each message);
- ag2-log: a runtime_logging database, one ``chat_completions`` row a reply,
  each request holding the chat so far (as AG2 logs it);
- agentchat: a ``TaskResult`` JSON;
- langgraph: a SqliteSaver database of a chatbot's thread (a person's input,
  the ``agent`` node's answer, in turn), a checkpoint and a write a step, the
  values LangGraph's msgpack (extension type 5, a message's class and fields).
  Only the latest checkpoint holds the whole state: the import reads no other,
  and states that grow a message a step would make the file hundreds of MB;
- otel: the run's own ``roost export --to otel``.

Reported: the best of ``--repeat`` in-process imports (``import_run``: reading
the file and deriving the run, which roost's replay makes), after one import
that loads the modules; then ``roost import`` as a command, start-up included.
Figures only, never asserted (a shared machine makes them move).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgpack

from roost.importers import import_run

HUMAN = "langchain_core.messages.human"
AI = "langchain_core.messages.ai"


def said(n: int, speakers: str = "ab") -> list[tuple[str, str]]:
    return [(speakers[k % len(speakers)], f"line {k}: " + "words " * 8) for k in range(n)]


def ag2(path: Path, n: int, speakers: str = "ab") -> None:
    messages = [{"content": text, "role": "user", "name": who} for who, text in said(n, speakers)]
    path.write_text(json.dumps(messages))


def agentchat(path: Path, n: int) -> None:
    messages = [
        {"type": "TextMessage", "source": who, "content": text, "models_usage": None}
        for who, text in said(n)
    ]
    path.write_text(json.dumps({"messages": messages, "stop_reason": None}))


def ag2_log(path: Path, n: int) -> None:
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE chat_completions (id INTEGER PRIMARY KEY, invocation_id TEXT,"
        " client_id INTEGER, wrapper_id INTEGER, session_id TEXT, source_name TEXT,"
        " request TEXT, response TEXT, is_cached INTEGER, cost REAL,"
        " start_time DATETIME, end_time DATETIME)"
    )
    lines = said(n)
    chat: list[dict[str, Any]] = [{"content": lines[0][1], "role": "user", "name": lines[0][0]}]
    rows = []
    for k, (who, text) in enumerate(lines[1:], 1):
        request = {"messages": [{"content": f"You are {who}.", "role": "system"}, *chat]}
        response = {
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "model": "bench",
            "usage": {"prompt_tokens": k, "completion_tokens": 9},
        }
        moment = f"2026-12-02 10:{k // 60 % 60:02d}:{k % 60:02d}.000000"
        rows.append((k, who, json.dumps(request), json.dumps(response), moment, moment))
        chat.append({"content": text, "role": "user", "name": who})
    db.executemany(
        "INSERT INTO chat_completions (id, source_name, request, response, start_time, end_time)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )
    db.commit()
    db.close()


def uuid6(ticks: int, step: int) -> str:
    """A checkpoint id as LangGraph makes them (UUID version 6 of a time in 100 ns ticks)."""
    value = ((ticks >> 12) << 80) | (0x6000 | (ticks & 0x0FFF)) << 64
    value |= (0x8000 | (step & 0x3FFF)) << 48 | 0x1234_5678_9ABC
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def message(k: int, text: str) -> msgpack.ExtType:
    """A chatbot's thread: a person's input (even), the ``agent`` node's answer (odd)."""
    human = k % 2 == 0
    module, name, kind = (HUMAN, "HumanMessage", "human") if human else (AI, "AIMessage", "ai")
    fields = {"content": text, "type": kind, "name": None, "id": f"m{k}", "tool_calls": []}
    return msgpack.ExtType(5, msgpack.packb([module, name, fields, "model_validate_json"]))


def langgraph(path: Path, n: int) -> None:
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',"
        " checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB,"
        " metadata BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))"
    )
    db.execute(
        "CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',"
        " checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, task_path TEXT NOT NULL DEFAULT '',"
        " idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, value BLOB,"
        " PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))"
    )
    base = (time.time_ns() // 100) + 0x01B21DD213814000
    ids = [uuid6(base + k * 10_000, k) for k in range(n + 1)]
    lines = said(n)
    everything = [message(k, text) for k, (_, text) in enumerate(lines)]
    for k in range(n + 1):
        state = {"v": 4, "id": ids[k], "channel_values": {}}
        if k == n:
            state["channel_values"] = {"messages": everything}
        parent = ids[k - 1] if k else None
        db.execute(
            "INSERT INTO checkpoints VALUES ('t', '', ?, ?, 'msgpack', ?, '{}')",
            (ids[k], parent, msgpack.packb(state)),
        )
        if k < n:
            node = "agent" if k % 2 else "__start__"
            db.execute(
                "INSERT INTO writes VALUES ('t', '', ?, ?, ?, 0, 'messages', 'msgpack', ?)",
                (ids[k], f"task{k}", f"~__pregel_pull, {node}", msgpack.packb([everything[k]])),
            )
    db.commit()
    db.close()


def otel(path: Path, n: int, folder: Path) -> None:
    source = folder / "for-otel.json"
    ag2(source, n)
    env = {**os.environ, "ROOST_DB": str(folder / "otel.db")}
    done = command(["import", str(source), "--from", "ag2"], env)
    run_id = done.stdout.split()[2]
    path.write_text(command(["export", run_id, "--to", "otel"], env).stdout)


def command(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "roost", *args], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode:
        raise SystemExit(f"roost {' '.join(args)}: {done.stderr.strip()}")
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    n = options.messages
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        files = {
            "ag2": (folder / "chat.json", "ag2"),
            "ag2-group": (folder / "group.json", "ag2"),
            "ag2-log": (folder / "log.sqlite", "ag2"),
            "agentchat": (folder / "task.json", "agentchat"),
            "langgraph": (folder / "checkpoints.sqlite", "langgraph"),
            "otel": (folder / "spans.json", "otel"),
        }
        ag2(files["ag2"][0], n)
        ag2(files["ag2-group"][0], n, "abc")
        ag2_log(files["ag2-log"][0], n)
        agentchat(files["agentchat"][0], n)
        langgraph(files["langgraph"][0], n)
        otel(files["otel"][0], n, folder)
        import_run(files["ag2"][0], "ag2", "warm-up")  # loads the modules once
        print(f"{'format':<10} {'file':>9} {'messages':>8} {'import_run':>11} {'roost import':>13}")
        for label, (path, fmt) in files.items():
            best = float("inf")
            for _ in range(options.repeat):
                began = time.perf_counter()
                _, events, _ = import_run(path, fmt, "bench")
                best = min(best, time.perf_counter() - began)
            count = sum(e.type == "message" for e in events)
            env = {**os.environ, "ROOST_DB": str(folder / f"{label}.db")}
            began = time.perf_counter()
            command(["import", str(path), "--from", fmt], env)
            whole = time.perf_counter() - began
            size = f"{path.stat().st_size / 1024:.0f} KB"
            print(f"{label:<10} {size:>9} {count:>8} {best:>10.3f}s {whole:>12.3f}s")


if __name__ == "__main__":
    main()
