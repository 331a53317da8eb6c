"""Live events and token deltas over Server-Sent Events and WebSocket."""

from __future__ import annotations

import json
import queue
import threading
from typing import TYPE_CHECKING, Any

import pytest
from fakes.llm_server import FakeLLMServer
from fakes.script import Reply
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.serve.conftest import Server, settled, sse_items

if TYPE_CHECKING:
    import httpx2


class Follower:
    """Reads a run's SSE stream in a thread until ``until`` holds."""

    def __init__(self, api: httpx2.Client, path: str, until: Any) -> None:
        self.items: list[dict[str, Any]] = []
        self.opened = threading.Event()
        self._errors: queue.Queue[BaseException] = queue.Queue()

        def read() -> None:
            def seen(item: dict[str, Any]) -> bool:
                self.opened.set()
                self.items.append(item)
                return bool(until(item))

            try:
                sse_items(api, path, until=seen)
            except BaseException as error:  # surfaced by join
                self._errors.put(error)
            finally:
                self.opened.set()

        self._thread = threading.Thread(target=read, daemon=True)
        self._thread.start()
        assert self.opened.wait(30)

    def join(self) -> list[dict[str, Any]]:
        self._thread.join(60)
        assert not self._thread.is_alive()
        if not self._errors.empty():
            raise self._errors.get()
        return self.items


def paused_after(seq: int) -> Any:
    return lambda item: (
        item["type"] == "state" and item["status"] == "paused" and (item["next_seq"] > seq + 1)
    )


def test_the_stream_gives_the_events_so_far_then_the_state(api: httpx2.Client) -> None:
    run_id = api.post("/runs", json={"flow": "chat.yaml"}).json()["id"]
    raw: list[tuple[str, str, str | None]] = []
    items = sse_items(api, f"/runs/{run_id}/stream", until=lambda i: i["type"] == "state", raw=raw)
    events = api.get(f"/runs/{run_id}/events").json()
    assert [item["event"] for item in items[:-1]] == events
    assert items[-1]["status"] == "paused" and items[-1]["waiting_for"]["node"] == "USER"
    # Each event is an SSE message named by its type, with the event's seq as its id.
    assert [(name, ident) for name, _, ident in raw[:-1]] == [
        ("event", str(e["seq"])) for e in events
    ]
    assert raw[-1][0] == "state"


def test_a_step_streams_its_text_then_its_events_as_they_happen(api: httpx2.Client) -> None:
    run = api.post("/runs", json={"flow": "chat.yaml"}).json()
    last = run["next_seq"] - 1
    follower = Follower(api, f"/runs/{run['id']}/stream?after={last}", paused_after(last))
    api.post(f"/runs/{run['id']}/messages", json={"content": "Four of us."})
    items = follower.join()

    kinds = [item["type"] for item in items]
    assert kinds[0] == "state"  # where the run stood when the stream opened
    events = [item["event"] for item in items if item["type"] == "event"]
    assert [e["seq"] for e in events] == list(range(last + 1, last + 1 + len(events)))
    assert [e["type"] for e in events] == ["resume", "message", "llm_call", "message", "interrupt"]
    delta = kinds.index("delta")
    answer = next(
        i
        for i, item in enumerate(items)
        if item["type"] == "event" and item["event"].get("content") == "Noted."
    )
    assert items[delta] == {"type": "delta", "node": "bot", "text": "Noted."}
    assert delta < answer  # the text streams before its message is recorded


def test_last_event_id_resumes_a_stream_after_that_event(api: httpx2.Client) -> None:
    run_id = api.post("/runs", json={"flow": "chat.yaml"}).json()["id"]
    with api.stream(
        "GET", f"/runs/{run_id}/stream", headers={"Last-Event-ID": "2"}, timeout=30
    ) as response:
        for line in response.iter_lines():
            if line.startswith("id:"):
                assert line == "id: 3"
                break


def test_the_stream_of_a_terminated_run_ends_by_itself(api: httpx2.Client) -> None:
    run_id = api.post("/runs", json={"flow": "hello.yaml"}).json()["id"]
    settled(api, run_id, "terminated")
    items = sse_items(api, f"/runs/{run_id}/stream")
    assert items[-1]["type"] == "state" and items[-1]["status"] == "terminated"
    assert items[-2]["event"]["type"] == "terminate"


def test_a_model_answer_streams_token_by_token_from_an_openai_compatible_server(
    server: Server, api: httpx2.Client
) -> None:
    with FakeLLMServer() as fake:
        fake.script(Reply(text="Hi!"), Reply(text="Hello there, my friend!", chunk_size=4))
        flow = f"""
roost: 1
name: live
providers:
  llm: {{kind: openai, model: m, base_url: "{fake.url}/v1", api_key: sk-test, max_retries: 0}}
defaults: {{provider: llm}}
agents:
  USER: {{interrupt: ALWAYS, role: A person.}}
  bot: {{role: You greet.}}
start: {{from: USER, to: bot, content: Hi}}
"""
        (server.flows / "live.yaml").write_text(flow, encoding="utf-8")
        run_id = api.post("/runs", json={"flow": "live.yaml"}).json()["id"]
        last = settled(api, run_id, "paused")["next_seq"] - 1
        follower = Follower(api, f"/runs/{run_id}/stream?after={last}", paused_after(last))
        api.post(f"/runs/{run_id}/messages", json={"content": "And you?"})
        items = follower.join()
    deltas = [item["text"] for item in items if item["type"] == "delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == "Hello there, my friend!"


def test_a_client_that_leaves_mid_stream_leaves_the_server_well(
    server: Server, api: httpx2.Client
) -> None:
    run_id = api.post("/runs", json={"flow": "chat.yaml"}).json()["id"]
    with api.stream("GET", f"/runs/{run_id}/stream", timeout=30) as response:
        for line in response.iter_lines():
            if line.startswith("data:"):
                break  # the connection closes here, in the middle of the stream
    accepted = api.post(f"/runs/{run_id}/messages", json={"content": "Still there?"})
    assert accepted.status_code == 202
    settled(api, run_id, "paused")
    assert "Traceback" not in server.errors()


# ---------------------------------------------------------------------- WebSocket


def receive(socket: Any) -> dict[str, Any]:
    item: dict[str, Any] = json.loads(socket.recv(timeout=30))
    return item


def test_the_websocket_streams_and_takes_messages(server: Server, api: httpx2.Client) -> None:
    run_id = api.post("/runs", json={"flow": "chat.yaml"}).json()["id"]
    with connect(f"{server.ws_url}/runs/{run_id}/ws") as socket:
        items = [receive(socket)]
        while items[-1]["type"] != "state":
            items.append(receive(socket))
        assert [i["event"]["seq"] for i in items[:-1]] == list(range(len(items) - 1))
        last = items[-1]["next_seq"]

        socket.send(json.dumps({"type": "message", "content": "Four of us."}))
        after: list[dict[str, Any]] = []
        while not (after and paused_after(last - 1)(after[-1])):
            after.append(receive(socket))
        assert {"type": "accepted", "run": run_id, "queued": 1} in after
        said = [
            i["event"]["content"]
            for i in after
            if i["type"] == "event" and i["event"]["type"] == "message"
        ]
        assert said == ["Four of us.", "Noted."]

        socket.send("{not json")
        error = receive(socket)
        assert error["type"] == "error" and error["kind"] == "invalid_request"
        socket.send(json.dumps({"type": "cancel"}))
        refused = receive(socket)
        assert refused == {
            "type": "error",
            "status": 409,
            "error": f"run {run_id} is not taking a step: there is nothing to cancel",
            "kind": "conflict",
        }


def test_the_websocket_of_an_unknown_run_says_so_and_closes(server: Server) -> None:
    with connect(f"{server.ws_url}/runs/nothing-here/ws") as socket:
        error = receive(socket)
        assert error["type"] == "error" and error["kind"] == "not_found"
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=30)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404


def test_a_stream_reopened_with_last_event_id_loses_and_repeats_no_event(
    api: httpx2.Client,
) -> None:
    run_id = api.post("/runs", json={"flow": "chat.yaml"}).json()["id"]
    seen: list[int] = []
    for turn in range(3):  # a step taken while no stream is open, then the stream comes back
        headers = {"Last-Event-ID": str(seen[-1])} if seen else {}
        with api.stream("GET", f"/runs/{run_id}/stream", headers=headers, timeout=30) as response:
            for line in response.iter_lines():
                if line.startswith("id:"):
                    seen.append(int(line[3:]))
                if line.startswith("data:") and '"type": "state"' in line:
                    break
        api.post(f"/runs/{run_id}/messages", json={"content": f"turn {turn}"})
        settled(api, run_id, "paused")
    events = api.get(f"/runs/{run_id}/events").json()
    assert seen == [event["seq"] for event in events[: len(seen)]]
    assert seen == list(range(len(seen)))  # in order, none twice, none left out
    assert len(seen) > 6  # the stream was reopened after steps it did not watch
