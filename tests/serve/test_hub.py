"""The Hub's heartbeat: it stops a session whose lease another worker took, and no other."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from roost.serve.config import ServeConfig
from roost.serve.hub import Hub

if TYPE_CHECKING:
    from pathlib import Path


class _Session:
    """What the heartbeat reads of a session: its task, and whether it is leaving."""

    def __init__(self, leaving: bool = False) -> None:
        self.leaving = leaving
        self.task = asyncio.ensure_future(asyncio.sleep(60))


async def _beats(hub: Hub, count: int = 3) -> None:
    """Waits ``count`` of the heartbeat's polls."""
    await asyncio.sleep(hub.config.poll_seconds * count + 0.2)


def _hub(tmp_path: Path) -> Hub:
    (tmp_path / "flows").mkdir(exist_ok=True)
    return Hub(ServeConfig(flows=tmp_path / "flows", db=str(tmp_path / "runs.db"),
                           lease_seconds=0.3))  # fmt: skip


def test_a_session_whose_lease_is_gone_is_stopped(tmp_path: Path) -> None:
    async def scenario() -> bool:
        hub = _hub(tmp_path)
        await hub.open()
        session: Any = _Session()  # no lease row: another worker holds the run now
        hub.sessions["r1"] = session
        await _beats(hub)
        hub.sessions.clear()
        await hub.close()
        return bool(session.task.cancelled())

    assert asyncio.run(scenario())


def test_a_session_handing_its_lease_back_is_not_stopped_as_if_it_lost_it(
    tmp_path: Path,
) -> None:
    async def scenario() -> bool:
        hub = _hub(tmp_path)
        await hub.open()
        session: Any = _Session(leaving=True)  # its lease given back, its loop about to end
        hub.sessions["r1"] = session
        await _beats(hub)
        hub.sessions.clear()
        stopped = session.task.cancelled()
        session.task.cancel()
        await hub.close()
        return bool(stopped)

    assert not asyncio.run(scenario())


def test_the_session_that_took_a_run_up_again_is_not_stopped_for_the_last_ones_lease(
    tmp_path: Path,
) -> None:
    # The race a long run met: the heartbeat renews the leases it saw; meanwhile that
    # session gives its lease back and a message starts a new session with a new lease.
    async def scenario() -> bool:
        hub = _hub(tmp_path)
        await hub.open()
        old: Any = _Session()
        new: Any = _Session()
        hub.sessions["r1"] = old
        renew = hub.leases.renew_all

        def renew_while_taken_up_again(run_ids: list[str]) -> tuple[set[str], set[str]]:
            lost, cancels = renew(run_ids)
            if hub.sessions.get("r1") is old:
                assert hub.leases.claim("r1")  # the new session's own lease
                hub.sessions["r1"] = new  # (the loop's own dict; the heartbeat reads it after)
            return lost, cancels

        hub.leases.renew_all = renew_while_taken_up_again  # type: ignore[method-assign]
        await _beats(hub)
        hub.sessions.clear()
        stopped = new.task.cancelled()
        for session in (old, new):
            session.task.cancel()
        await hub.close()
        return bool(stopped)

    assert not asyncio.run(scenario())


class _LiveRunner:
    """A Runner as the Hub keeps one between steps: its live state, and its flow."""

    def __init__(self, state: Any, flow: Any) -> None:
        self.state = state
        self.flow = flow


def test_a_thread_reads_the_stored_state_and_the_loop_the_live_one(tmp_path: Path) -> None:
    # A step may move the live state on while a thread reads it: a thread (GET /runs/{id})
    # folds the stored events instead, which agree with the row it read.
    from roost.runstate import RunState
    from tests.store.conftest import message, start_event

    async def scenario() -> tuple[str, str]:
        hub = _hub(tmp_path)
        log = hub.store.new_log("r1")
        log.append([start_event("r1"), message(1, "r1")])
        live = RunState()
        live.status, live.next_seq = "terminated", 2  # what a step would have made of it
        flow: Any = SimpleNamespace(path="f.yaml", text="roost: 1\nname: f\n")
        hub._runners["r1"] = _LiveRunner(live, flow)  # type: ignore[assignment]
        in_thread = await asyncio.to_thread(lambda: hub.reads.state("r1")[1].status)
        on_loop = hub.reads.state("r1")[1].status
        hub.store.close()
        return in_thread, on_loop

    assert asyncio.run(scenario()) == ("running", "terminated")


WAITS = """
roost: 1
name: waits
defaults: {provider: mock}
providers:
  mock:
    kind: scripted
    replies: [{tool_calls: [{name: wait, arguments: {delay: 600}}]}, TERMINATE]
tools:
  wait: {python: "asyncio:sleep", description: Waits DELAY seconds.}
agents:
  USER: {interrupt: ALWAYS, role: A person.}
  helper: {role: You wait when asked., functions: [wait]}
start: {from: USER, to: helper, content: Wait ten minutes.}
"""


def test_a_retry_sent_as_the_cancel_is_answered_waits_for_the_lease_to_come_back(
    tmp_path: Path,
) -> None:
    # CI met it under load: the session hands the lease back in a thread after the cancel
    # is answered, and a retry sent meanwhile was refused as if the run were still busy.
    import time

    from roost.errors import RunStateError

    async def scenario() -> str:
        hub = _hub(tmp_path)
        (tmp_path / "flows" / "waits.yaml").write_text(WAITS)
        await hub.open()
        release = hub.leases.release

        def slow_release(run_id: str) -> bool:
            time.sleep(0.4)  # a loaded machine
            return release(run_id)

        hub.leases.release = slow_release  # type: ignore[method-assign]
        run_id = await hub.start("waits.yaml", None, None, None, None)
        while not hub.busy(run_id):  # noqa: ASYNC110 - busy is a question, not an event
            await asyncio.sleep(0.01)
        await hub.cancel(run_id)
        try:
            await hub.retry(run_id)
            outcome = "retried"
        except RunStateError as refused:
            outcome = str(refused)
        await hub.close()
        hub.store.close()
        return outcome

    assert asyncio.run(scenario()) == "retried"
