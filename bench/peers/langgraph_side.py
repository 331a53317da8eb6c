"""LangGraph's side of the comparison: ``add_messages`` state, in memory or checkpointed.

    .venv/bin/python bench/peers/langgraph_side.py channel|pair|stored [--messages 2000]

Each member is a node that appends one ``AIMessage`` to the ``messages`` state
(reduced by ``add_messages``, which gives each message an id); the members
follow each other in a cycle until the state holds the messages asked for.
That node stands for the scripted model: no chat model object is called.

- channel: three member nodes in a cycle, started by a human message;
- pair: two nodes;
- stored: the channel with ``SqliteSaver``, LangGraph's SQLite checkpointer, on
  a file: a checkpoint of the state is written after every step.
"""

from __future__ import annotations

import importlib.metadata
import sqlite3
import tempfile
from pathlib import Path
from typing import Annotated, Any, TypedDict

import timing
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

REPLY = "A short reply."


class State(TypedDict):
    messages: Annotated[list[Any], add_messages]


def graph(members: list[str], limit: int, checkpointer: Any = None) -> Any:
    builder = StateGraph(State)
    for index, name in enumerate(members):

        def speak(state: State, name: str = name) -> dict[str, Any]:
            return {"messages": [AIMessage(content=REPLY, name=name)]}

        following = members[(index + 1) % len(members)]

        def route(state: State, following: str = following) -> str:
            return END if len(state["messages"]) >= limit else following

        builder.add_node(name, speak)
        builder.add_conditional_edges(name, route, [following, END])
    builder.add_edge(START, members[0])
    return builder.compile(checkpointer=checkpointer)


def runner(members: list[str], first: str, folder: Path | None) -> timing.Run:
    counter = iter(range(10**6))
    saver = None
    if folder is not None:
        saver = SqliteSaver(sqlite3.connect(folder / "checkpoints.db", check_same_thread=False))

    def run(messages: int) -> int:
        limit = messages + 1  # the first message, then the members' replies
        config = {"recursion_limit": limit + 10, "configurable": {"thread_id": next(counter)}}
        start = {"messages": [HumanMessage(content=first, name="USER")]}
        state = graph(members, limit, saver).invoke(start, config=config)
        return len(state["messages"])

    return run


def main() -> None:
    args = timing.arguments(["channel", "pair", "stored"])
    members = ["alice", "bob"] if args.scenario == "pair" else ["alice", "bob", "carol"]
    first = "Hello Bob." if args.scenario == "pair" else "Let us talk."
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name) if args.scenario == "stored" else None
        run = runner(members, first, folder)
        timing.check(run(30), 31, "langgraph")
        figures = timing.measure(run, args.messages)
    versions = {
        p: importlib.metadata.version(p) for p in ("langgraph", "langgraph-checkpoint-sqlite")
    }
    timing.report(figures, versions)


if __name__ == "__main__":
    main()
