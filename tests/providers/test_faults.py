"""Retries, timeouts and error messages, for every backend, with faults from the fake server."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

import anyio
import pytest
from fakes.script import Broken, Reply, Status, html, overloaded, rate_limited

from roost.errors import ProviderError
from roost.providers._retry import StreamInterruptedError

from .conftest import API_KEY, ASK, MakeProvider, first_text_event

if TYPE_CHECKING:
    from fakes.llm_server import FakeLLMServer


def outcomes(attempts: tuple[dict[str, object], ...]) -> list[object]:
    return [a["outcome"] for a in attempts]


async def test_server_errors_are_retried_by_the_sdk_and_counted(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Status(500), Status(503), Reply(text="at last"))
    response = await make_provider(kind).complete(ASK)
    assert response.message.content == "at last"
    assert len(server.requests) == 3
    assert outcomes(response.attempts) == ["http 500", "http 503", "ok"]
    # Every retry sends the same request again.
    assert server.requests[0].body == server.requests[2].body


async def test_rate_limit_honours_retry_after(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDKs wait with anyio.sleep; record what they ask for instead of timing the wait.
    asked: list[float] = []
    real_sleep = anyio.sleep

    async def sleep(delay: float) -> None:
        asked.append(delay)
        await real_sleep(delay)

    monkeypatch.setattr(anyio, "sleep", sleep)
    server.script(rate_limited("0.4"), Reply(text="ok"))
    response = await make_provider(kind).complete(ASK)
    assert asked == [0.4]  # the server's retry-after, not the SDK's own backoff
    assert outcomes(response.attempts) == ["http 429", "ok"]


async def test_overloaded_529_is_retried(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(overloaded(), Reply(text="ok"))
    response = await make_provider("anthropic").complete(ASK)
    assert outcomes(response.attempts) == ["http 529", "ok"]


async def test_retries_give_up_with_one_clear_error(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Status(500, "database on fire"), Status(500), Status(500))
    with pytest.raises(ProviderError) as caught:
        await make_provider(kind, max_retries=2).complete(ASK)
    message = str(caught.value)
    assert message.startswith("provider 'llm': server error (HTTP 500")
    assert "roost retry" in message and "\n" not in message
    assert len(server.requests) == 3
    assert outcomes(caught.value.attempts) == ["http 500", "http 500", "http 500"]


async def test_reset_before_any_text_is_retried_by_roost(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    reply = Reply(text="Hello world")
    server.script(Broken(reply, after=1, how="reset"), reply)
    shown: list[str] = []
    response = await make_provider(kind).complete(ASK, on_text=shown.append)
    assert response.message.content == "Hello world" and "".join(shown) == "Hello world"
    assert outcomes(response.attempts) == ["connection error", "ok"]


async def test_reset_after_text_was_shown_is_not_retried_silently(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    reply = Reply(text="Hello world")
    server.script(Broken(reply, after=first_text_event(kind, reply), how="reset"), reply)
    shown: list[str] = []
    with pytest.raises(StreamInterruptedError) as caught:
        await make_provider(kind).complete(ASK, on_text=shown.append)
    assert shown == ["Hell"]
    assert len(server.requests) == 1
    assert "roost retry" in str(caught.value)
    assert outcomes(caught.value.attempts) == ["connection error"]


async def test_reset_after_text_without_a_listener_is_retried(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    reply = Reply(text="Hello world")
    server.script(Broken(reply, after=first_text_event(kind, reply), how="reset"), reply)
    response = await make_provider(kind).complete(ASK)
    assert response.message.content == "Hello world"
    assert len(server.requests) == 2


async def test_error_event_inside_a_200_stream(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    reply = Reply(text="fine")
    server.script(Broken(reply, after=1, how="error"), reply)
    response = await make_provider(kind).complete(ASK)
    assert response.message.content == "fine"
    assert outcomes(response.attempts) == ["stream error", "ok"]


async def test_responses_failed_event(server: FakeLLMServer, make_provider: MakeProvider) -> None:
    reply = Reply(text="fine")
    server.script(
        Broken(reply, after=2, how="failed", error_type="server_error"),
        Broken(reply, after=2, how="failed", error_type="invalid_prompt"),
    )
    provider = make_provider("openai-responses")
    with pytest.raises(ProviderError, match="the stream failed: the model failed"):
        await provider.complete(ASK)
    # The first failure was the server's: tried again; the second was not.
    assert len(server.requests) == 2


async def test_error_event_that_is_the_callers_fault_is_not_retried(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Broken(Reply(text="x"), after=1, how="error", error_type="invalid_request_error"))
    with pytest.raises(ProviderError, match="the stream failed: stream failed"):
        await make_provider(kind).complete(ASK)
    assert len(server.requests) == 1


async def test_stalled_stream_times_out(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Broken(Reply(text="slow"), after=1, how="stall", seconds=6))
    provider = make_provider(kind, timeout=0.3, max_retries=0)
    # A client that waited the stall out would see the stream closed: a different error.
    with pytest.raises(ProviderError, match=r"stopped sending in the middle .*for 0.3 s"):
        await provider.complete(ASK)
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [200, 404])
@pytest.mark.parametrize("stream", [True, False])
async def test_html_answer_names_base_url(
    kind: str, status: int, stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(html(status))
    with pytest.raises(ProviderError, match=r"answered with an HTML page.*check base_url"):
        await make_provider(kind, stream=stream).complete(ASK)


async def test_refused_key_says_what_to_check_and_hides_the_key(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Status(401, f"Incorrect API key provided: {API_KEY}", "invalid_api_key"))
    with pytest.raises(ProviderError) as caught:
        await make_provider(kind).complete(ASK)
    message = str(caught.value)
    assert "HTTP 401" in message and "check the provider's api_key" in message
    assert API_KEY not in message and "***" in message
    assert server.requests[0].api_key == API_KEY  # it was sent, just never shown


async def test_unknown_model(kind: str, server: FakeLLMServer, make_provider: MakeProvider) -> None:
    server.script(Status(404, "The model `nope` does not exist", "not_found_error"))
    with pytest.raises(ProviderError, match=r"HTTP 404.*check the model name 'nope'"):
        await make_provider(kind, model="nope").complete(ASK)
    assert len(server.requests) == 1  # a 404 is not retried


async def test_unreachable_base_url(kind: str, make_provider: MakeProvider) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = make_provider(kind, base_url=f"http://127.0.0.1:{port}/v1", max_retries=1)
    with pytest.raises(
        ProviderError, match=r"cannot reach http://127.0.0.1:.*check base_url"
    ) as caught:
        await provider.complete(ASK)
    assert outcomes(caught.value.attempts) == ["connection error", "connection error"]


async def test_secrets_of_the_flow_never_appear(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    # The key itself echoed back inside a 400 error body.
    server.script(Status(400, f"bad header Bearer {API_KEY}", "invalid_request_error"))
    with pytest.raises(ProviderError) as caught:
        await make_provider(kind).complete(ASK)
    assert API_KEY not in str(caught.value)
