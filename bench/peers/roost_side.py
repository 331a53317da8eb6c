"""roost's side of the comparison: one scenario in this fresh process, one JSON line out.

    python bench/peers/roost_side.py channel|pair|stored|cli [--messages 2000]

- channel: three members round robin in one channel, scripted model, log in memory;
- pair: two agents talking, scripted model, log in memory;
- routed: the channel with a route on every member's turn, log in memory;
- stored: the channel with its log in a SQLite store on disk (the API, nothing printed);
- cli: the channel through ``roost run`` in this process: the default store
  (.roost/roost.db in a fresh folder) and the transcript printed to a pipe that a
  ``cat`` process drains, as ``roost run flow.yaml | cat`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import timing

# The scenarios are overhead.py's flows, so roost is measured here as it is there.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from overhead import CHANNEL, PAIR, ROUTED

if TYPE_CHECKING:
    from collections.abc import Iterator


def in_memory(template: str) -> timing.Run:
    from roost.engine import Runner
    from roost.flow import load_flow_text
    from roost.ports import MemoryLog

    def run(messages: int) -> int:
        flow = load_flow_text(template.format(n=messages), "peers.yaml", environ={})
        state = asyncio.run(Runner(flow=flow, log=MemoryLog("peers")).start())
        return len(state.history)

    return run


def stored(folder: Path) -> timing.Run:
    from roost.engine import Runner
    from roost.flow import load_flow_text
    from roost.store.sql import SqlStore

    store = SqlStore(f"sqlite:///{folder / 'stored.db'}")
    counter = iter(range(10**6))

    def run(messages: int) -> int:
        flow = load_flow_text(CHANNEL.format(n=messages), "peers.yaml", environ={})
        log = store.new_log(f"run-{next(counter)}")
        state = asyncio.run(Runner(flow=flow, log=log).start())
        return len(state.history)

    return run


def command_line(folder: Path) -> timing.Run:
    from roost.cli import main
    from roost.store.sql import SqlStore

    os.chdir(folder)  # the default store: .roost/roost.db here
    os.environ.pop("ROOST_DB", None)

    def run(messages: int) -> int:
        path = folder / f"channel-{messages}.yaml"
        path.write_text(CHANNEL.format(n=messages))
        with contextlib.suppress(SystemExit):
            main(["run", str(path), "--no-input"])
        store = SqlStore(None)
        try:
            return store.runs()[0].messages
        finally:
            store.close()

    return run


@contextlib.contextmanager
def stdout_to_a_pipe() -> Iterator[None]:
    """This process's standard output goes to ``cat > /dev/null`` while inside."""
    sys.stdout.flush()
    kept = os.dup(1)
    reader = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert reader.stdin is not None
    os.dup2(reader.stdin.fileno(), 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(kept, 1)
        os.close(kept)
        reader.stdin.close()
        reader.wait()


def load_once(template: str, messages: int) -> None:
    """Loads the largest flow measured once, untimed: what loading it imports is start-up.

    A flow whose round cap reaches 1,000 has its loops looked into with networkx,
    imported then; inside a timed run that one-off import would count as messages.
    """
    from roost.flow import load_flow_text

    load_flow_text(template.format(n=messages), "peers.yaml", environ={})


def main() -> None:
    args = timing.arguments(["channel", "pair", "routed", "stored", "cli"])
    versions = {"roost": importlib.metadata.version("roost")}
    templates = {"pair": PAIR, "routed": ROUTED}
    load_once(templates.get(args.scenario, CHANNEL), args.messages)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        if args.scenario == "cli":
            with stdout_to_a_pipe():
                figures = timing.measure(command_line(folder), args.messages)
        elif args.scenario == "stored":
            figures = timing.measure(stored(folder), args.messages)
        else:
            template = templates.get(args.scenario, CHANNEL)
            figures = timing.measure(in_memory(template), args.messages)
    timing.report(figures, versions)


if __name__ == "__main__":
    main()
