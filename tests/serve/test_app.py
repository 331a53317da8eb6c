"""Every endpoint of ``roost serve`` against a running server process."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from fakes.llm_server import FakeLLMServer
from fakes.script import FakeUsage, Reply

from tests.serve.conftest import PRICED, Server, contents, settled

if TYPE_CHECKING:
    import httpx2

FLAKY = """
roost: 1
name: flaky
defaults: {provider: mock}
providers:
  mock: {kind: scripted, replies: [{error: the server is busy}, "Hello again!", TERMINATE]}
agents:
  USER: {role: A person.}
  bot: {role: You greet people.}
start: {from: USER, to: bot, content: Hello}
"""


HELLO_TO = """
roost: 1
name: changing
defaults: {{provider: mock}}
providers:
  mock: {{kind: scripted, replies: ["Hello!"]}}
agents:
  USER: {{interrupt: ALWAYS, role: A person.}}
  bot: {{role: You greet.}}
start: {{from: USER, to: bot, content: {greeting}}}
"""


def start(api: httpx2.Client, flow: str, **fields: object) -> dict[str, object]:
    answer = api.post("/runs", json={"flow": flow, **fields})
    assert answer.status_code == 201, answer.text
    detail: dict[str, object] = answer.json()
    return detail


def test_health_names_the_version_and_worker(api: httpx2.Client) -> None:
    answer = api.get("/health")
    assert answer.status_code == 200
    assert answer.json()["status"] == "ok"
    assert answer.json()["worker"]


def test_the_flows_folder_is_listed_with_names_and_problems(api: httpx2.Client) -> None:
    listed = {entry["path"]: entry for entry in api.get("/flows").json()}
    assert {"chat.yaml", "hello.yaml", "team/room.yaml", "broken.yaml"} <= listed.keys()
    assert listed["team/room.yaml"]["name"] == "team" and listed["team/room.yaml"]["valid"]
    broken = listed["broken.yaml"]
    assert broken["valid"] is False
    assert broken["problems"] and all("broken.yaml:" in line for line in broken["problems"])
    # Located by the flow's name in the folder, never by where the server keeps its files.
    assert all(line.startswith("broken.yaml:") for line in broken["problems"])


def test_validate_gives_every_problem_as_the_command_line_prints_it(api: httpx2.Client) -> None:
    good = api.post("/flows/validate", json={"flow": "chat.yaml"}).json()
    assert good == {"flow": "chat.yaml", "valid": True, "problems": []}
    bad = api.post("/flows/validate", json={"flow": "broken.yaml"}).json()
    assert bad["valid"] is False
    assert any(":5:" in line and ": error: " in line for line in bad["problems"])
    assert all(line.startswith("broken.yaml:") for line in bad["problems"])


@pytest.mark.parametrize(
    ("flow", "status"),
    [
        ("../runs.db", 403),
        ("/etc/passwd", 403),
        ("team/../../x.yaml", 403),
        ("missing.yaml", 404),
        ("team", 404),
        ("é" * 200 + ".yaml", 404),  # too long a name for the file system
    ],
)
def test_a_flow_path_outside_the_folder_or_missing_is_one_error(
    api: httpx2.Client, flow: str, status: int
) -> None:
    documented = api.get("/openapi.json").json()["paths"]
    for path, answer in (
        ("/flows/validate", api.post("/flows/validate", json={"flow": flow})),
        ("/runs", api.post("/runs", json={"flow": flow})),
    ):
        assert answer.status_code == status
        assert str(status) in documented[path]["post"]["responses"]  # the schema says so too
        body = answer.json()
        assert body["error"].startswith(f"flow {flow!r}: ") and "\n" not in body["error"]


def test_a_run_starts_pauses_for_its_person_and_goes_on_with_an_answer(
    api: httpx2.Client,
) -> None:
    run = start(api, "chat.yaml", title="Planning")
    run_id = str(run["id"])
    assert run["status"] == "paused" and run["title"] == "Planning"
    assert run["waiting_for"] == {
        "node": "USER",
        "answering": "bot",
        "reason": "human",
        "tool_call": None,
        "tool_calls": None,
        "choices": [],
        "budget": None,
    }
    assert any(row["id"] == run_id for row in api.get("/runs", params={"flow": "chat"}).json())
    assert all(row["status"] == "paused" for row in api.get("/runs?status=paused").json())

    accepted = api.post(f"/runs/{run_id}/messages", json={"content": "Four of us."})
    assert accepted.status_code == 202
    assert accepted.json() == {"run": run_id, "queued": 1}
    settled(api, run_id, "paused")
    assert contents(api, run_id)[-3:] == [
        ("bot", "USER", "Hello! How can I help?"),
        ("USER", "bot", "Four of us."),
        ("bot", "USER", "Noted."),
    ]


def test_a_flow_file_changed_between_two_runs_is_read_again(
    server: Server, api: httpx2.Client
) -> None:
    path = server.flows / "changing.yaml"
    said = []
    for greeting in ("Hi A", "Hi B"):  # the same size: only the content tells them apart
        path.write_text(HELLO_TO.format(greeting=greeting), encoding="utf-8")
        run_id = start(api, "changing.yaml")["id"]
        said.append(contents(api, run_id)[0][2])
    assert said == ["Hi A", "Hi B"]
    path.write_text("roost: 1\nname: [broken\n", encoding="utf-8")
    assert api.post("/runs", json={"flow": "changing.yaml"}).status_code == 422


def test_events_after_a_seq_are_only_the_later_ones(api: httpx2.Client) -> None:
    run_id = start(api, "hello.yaml")["id"]
    settled(api, run_id, "terminated")
    every = api.get(f"/runs/{run_id}/events").json()
    assert [event["seq"] for event in every] == list(range(len(every)))
    assert every[0]["type"] == "run_start" and every[-1]["type"] == "terminate"
    later = api.get(f"/runs/{run_id}/events", params={"after": 2}).json()
    assert later == every[3:]
    assert api.get(f"/runs/{run_id}/events", params={"after": 99}).json() == []


def test_a_message_to_a_run_that_waits_for_nobody_is_refused(api: httpx2.Client) -> None:
    run_id = start(api, "hello.yaml")["id"]
    settled(api, run_id, "terminated")
    answer = api.post(f"/runs/{run_id}/messages", json={"content": "more"})
    assert answer.status_code == 409
    assert answer.json() == {
        "error": f"run {run_id} is not waiting for a message: it has terminated; "
        "fork it to go on from an earlier point",
        "kind": "conflict",
    }


def test_a_message_as_someone_the_run_does_not_wait_for_is_refused(api: httpx2.Client) -> None:
    run_id = start(api, "chat.yaml")["id"]
    answer = api.post(f"/runs/{run_id}/messages", json={"content": "hi", "as": "bot"})
    assert answer.status_code == 409
    assert answer.json()["error"] == f"run {run_id} waits for USER, not bot"
    answer = api.post(f"/runs/{run_id}/messages", json={"content": "hi", "as": "USER"})
    assert answer.status_code == 202


def test_a_tool_call_is_approved_with_yes(api: httpx2.Client) -> None:
    run = start(api, "approve.yaml")
    run_id = str(run["id"])
    waiting = run["waiting_for"]
    assert isinstance(waiting, dict) and waiting["reason"] == "tool_approval"
    assert waiting["tool_call"]["name"] == "mean"
    api.post(f"/runs/{run_id}/messages", json={"content": "yes"})
    settled(api, run_id, "terminated")
    events = api.get(f"/runs/{run_id}/events").json()
    assert [e["content"] for e in events if e["type"] == "tool_result"] == ["5.0"]


def test_a_channel_asks_who_speaks_and_a_wrong_name_is_not_delivered(
    api: httpx2.Client,
) -> None:
    run = start(api, "team/room.yaml")
    run_id = str(run["id"])
    assert run["waiting_for"]["reason"] == "manual_select"  # type: ignore[index]
    assert run["waiting_for"]["choices"] == ["writer", "critic"]  # type: ignore[index]
    api.post(f"/runs/{run_id}/messages", json={"content": "nobody"})
    detail = settled(api, run_id, "paused")
    assert detail["next_seq"] == run["next_seq"]  # refused: nothing recorded
    api.post(f"/runs/{run_id}/messages", json={"content": "critic"})
    settled(api, run_id, "terminated")
    events = api.get(f"/runs/{run_id}/events").json()
    chosen = [(e["chosen"], e["by"]) for e in events if e["type"] == "select"]
    assert chosen[0] == ("critic", "manual")


def test_a_failed_step_is_retried(server: Server, api: httpx2.Client) -> None:
    (server.flows / "flaky.yaml").write_text(FLAKY, encoding="utf-8")
    run = start(api, "flaky.yaml")
    run_id = str(run["id"])
    detail = settled(api, run_id, "error")
    assert detail["pending"]["content"] == "provider 'mock': the server is busy"
    answer = api.post(f"/runs/{run_id}/retry")
    assert answer.status_code == 202
    settled(api, run_id, "terminated")
    assert contents(api, run_id)[-2][2] == "Hello again!"

    again = api.post(f"/runs/{run_id}/retry")
    assert again.status_code == 409
    assert again.json()["error"] == (
        f"run {run_id} is terminated: only a run stopped at an error "
        "(or left running by a process that stopped) can be retried"
    )


def test_a_fork_answers_an_interrupt_differently(api: httpx2.Client) -> None:
    run_id = str(start(api, "chat.yaml")["id"])
    api.post(f"/runs/{run_id}/messages", json={"content": "Four of us."})
    settled(api, run_id, "paused")
    events = api.get(f"/runs/{run_id}/events").json()
    first_pause = next(e["seq"] for e in events if e["type"] == "interrupt")

    answer = api.post(f"/runs/{run_id}/fork", json={"at": first_pause + 1, "message": "Six."})
    assert answer.status_code == 201
    fork = answer.json()
    assert fork["parent"] == run_id and fork["fork_at"] == first_pause + 1
    settled(api, fork["id"], "paused")
    assert ("USER", "bot", "Six.") in contents(api, fork["id"])
    assert ("USER", "bot", "Six.") not in contents(api, run_id)

    inside = api.post(f"/runs/{run_id}/fork", json={"at": first_pause - 1})
    assert inside.status_code == 400
    assert "are one step; fork at" in inside.json()["error"]


def test_the_graph_of_a_runs_flow_names_its_nodes(api: httpx2.Client) -> None:
    run_id = start(api, "team/room.yaml")["id"]
    answer = api.get(f"/runs/{run_id}/graph")
    assert answer.status_code == 200
    svg = answer.json()["svg"]
    assert svg.startswith("<svg")
    for node in ("node-writer", "node-critic", "node-room", "node-USER"):
        assert f'id="{node}"' in svg


def test_unknown_endpoints_and_methods_answer_json(api: httpx2.Client) -> None:
    missing = api.get("/nothing/here")
    assert missing.status_code == 404
    assert missing.json() == {"error": "no such endpoint: GET /nothing/here", "kind": "not_found"}
    wrong = api.delete("/runs")
    assert wrong.status_code == 405
    assert wrong.json()["error"] == "DELETE is not allowed on /runs"


def test_nothing_the_tests_sent_made_a_traceback(server: Server) -> None:
    # Runs last in this module: every bad request above was answered without one.
    assert "Traceback" not in server.errors()


def test_a_run_s_summary_gives_its_answer_and_its_cost_rounded(
    server: Server, api: httpx2.Client
) -> None:
    with FakeLLMServer() as llm:
        # gpt-4o-mini: 101 * $0.15 per million is 1.5149999999999999e-05 in floating point
        llm.script(Reply(text="Four. TERMINATE", usage=FakeUsage(prompt=101, completion=0)))
        (server.flows / "priced.yaml").write_text(PRICED.format(url=llm.url), encoding="utf-8")
        run_id = start(api, "priced.yaml")["id"]
        detail = settled(api, run_id, "terminated")
    assert (detail["answer"], detail["cost"]) == ("Four.", 1.515e-05)
    assert '"cost":0.00001515' in api.get(f"/runs/{run_id}").text
    hello = settled(api, start(api, "hello.yaml")["id"], "terminated")
    assert (hello["answer"], hello["cost"]) == ("Hello!", None)  # no call used tokens
