"""What real servers and proxies do at the edges, through the real SDKs, for each API.

Server-sent events framed in every legal way, keep-alive connections with
chunked bodies, streams closed before their final event, every finish reason
of the three APIs, tool names split across fragments, errors with and without
``retry-after`` and a 400 for a request the server cannot read.
"""

from __future__ import annotations

import json
import socket

import httpx2
import pytest
from fakes.llm_server import FakeLLMServer, sse_bytes
from fakes.script import Broken, FakeCall, Framing, Reply, Status

from roost.errors import ProviderError
from roost.messages import ModelRequest, ToolSpec, UserMessage
from roost.providers._retry import StreamInterruptedError

from .conftest import KINDS, MakeProvider, base_url, before_final, events_of

ASK = ModelRequest(
    system="s",
    messages=(UserMessage(content="hello"),),
    tools=(ToolSpec(name="lookup_weather"), ToolSpec(name="add")),
)
PATH = {"openai": "/v1/chat/completions", "openai-responses": "/v1/responses"}
# The event each API ends a whole answer with, as roost names it when it is missing.
FINAL = {
    "openai": "finish_reason",
    "openai-responses": "response.completed",
    "anthropic": "message_stop",
}


def outcomes(attempts: tuple[dict[str, object], ...]) -> list[object]:
    return [a["outcome"] for a in attempts]


# --------------------------------------------------------------------------- framing

FRAMINGS = {
    "crlf": Framing(crlf=True),
    "comments": Framing(comments=True),
    "split": Framing(split=3),
    "everything": Framing(crlf=True, comments=True, split=1),
}


@pytest.mark.parametrize("keep_alive", [False, True], ids=["http1.0", "keep-alive"])
@pytest.mark.parametrize("framing", FRAMINGS.values(), ids=FRAMINGS.keys())
async def test_every_legal_framing_of_a_stream_gives_the_same_answer(
    kind: str, framing: Framing, keep_alive: bool, make_provider: MakeProvider
) -> None:
    reply = Reply(
        text="Grüße 👋, in one piece",  # split=1 cuts its UTF-8 characters across writes
        calls=(FakeCall("add", {"a": 1}, id="c1"),),
        framing=framing,
    )
    with FakeLLMServer(keep_alive=keep_alive) as fake:
        fake.script(reply)
        shown: list[str] = []
        provider = make_provider(kind, base_url=base_url(kind, fake))
        response = await provider.complete(ASK, on_text=shown.append)
    assert response.message.content == reply.text == "".join(shown)
    (call,) = response.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("c1", "add", {"a": 1})
    assert response.finish_reason == {"openai": "tool_calls", "anthropic": "tool_use"}.get(
        kind, "completed"
    )


def raw_stream(fake: FakeLLMServer, kind: str, reply: Reply) -> tuple[dict[str, str], bytes]:
    """The headers and the body bytes of a streamed answer, as they came off the socket."""
    fake.script(reply)
    path = PATH.get(kind, "/v1/messages")
    body = {"model": "m", "stream": True, "max_tokens": 5}
    body["input" if kind == "openai-responses" else "messages"] = [{"role": "user", "content": "x"}]
    with socket.create_connection(("127.0.0.1", int(fake.url.rsplit(":", 1)[1]))) as conn:
        data = json.dumps(body).encode()
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(data)}\r\n"
        conn.sendall(head.encode() + b"Connection: close\r\n\r\n" + data)
        raw = b""
        while chunk := conn.recv(65536):
            raw += chunk
    header_bytes, _, content = raw.partition(b"\r\n\r\n")
    lines = header_bytes.decode().split("\r\n")[1:]
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return headers, content


def dechunk(content: bytes) -> tuple[bytes, list[int]]:
    """A chunked body's bytes and the size of each chunk (the last, 0, included)."""
    body, sizes = b"", []
    while True:
        size_line, _, content = content.partition(b"\r\n")
        size = int(size_line, 16)
        sizes.append(size)
        body, content = body + content[:size], content[size + 2 :]
        if size == 0:
            return body, sizes


@pytest.mark.parametrize("kind", KINDS)
def test_the_fake_server_writes_what_it_says(kind: str) -> None:
    """The edges the tests rely on are really on the wire."""
    framing = Framing(crlf=True, comments=True, split=2)
    reply = Reply(text="hi there", framing=framing)
    with FakeLLMServer(keep_alive=True) as fake:
        headers, content = raw_stream(fake, kind, reply)
    assert headers["transfer-encoding"] == "chunked"
    body, sizes = dechunk(content)
    assert body == b"".join(sse_bytes(events_of(kind, reply), framing))
    assert b": keep-alive\r\n\r\n" in body and b"\n" not in body.replace(b"\r\n", b"")
    assert sizes[-1] == 0 and max(sizes) == 2 and len(sizes) > len(body) // 2
    plain = Reply(text="hi there")
    with FakeLLMServer() as fake:
        headers, content = raw_stream(fake, kind, plain)
    assert "transfer-encoding" not in headers and "content-length" not in headers
    assert content == b"".join(sse_bytes(events_of(kind, plain), Framing()))
    assert b"\r" not in content
    assert not any(line.startswith(b":") for line in content.split(b"\n"))


@pytest.mark.parametrize("stream", [True, False])
async def test_keep_alive_connections_are_reused_across_calls(
    kind: str, stream: bool, make_provider: MakeProvider
) -> None:
    with FakeLLMServer(keep_alive=True) as fake:
        fake.script(Reply(text="one"), Reply(text="two"), Reply(text="three"))
        provider = make_provider(kind, base_url=base_url(kind, fake), stream=stream)
        answers = [(await provider.complete(ASK)).message.content for _ in range(3)]
        assert answers == ["one", "two", "three"]
        assert fake.connections == 1


# --------------------------------------------------------------------------- cut-off streams


@pytest.mark.parametrize("keep_alive", [False, True], ids=["eof", "unfinished-chunked-body"])
async def test_a_stream_closed_before_its_final_event_is_asked_again(
    kind: str, keep_alive: bool, make_provider: MakeProvider
) -> None:
    """Nobody saw the first answer: it is thrown away and asked for again."""
    first = Reply(text="Hello! half an ans")
    with FakeLLMServer(keep_alive=keep_alive) as fake:
        fake.script(
            Broken(first, after=before_final(kind, first), how="close"), Reply(text="Whole.")
        )
        response = await make_provider(kind, base_url=base_url(kind, fake)).complete(ASK)
        assert len(fake.requests) == 2
    assert response.message.content == "Whole."
    # Without a length, the clean close looks like the end of the body: only the
    # missing final event tells; a chunked body is visibly unfinished.
    assert outcomes(response.attempts) == [
        "connection error" if keep_alive else "broken stream",
        "ok",
    ]


async def test_responses_stream_ending_before_response_completed_is_not_an_answer(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    """The guard on ``response.completed``: without it this answer would be taken."""
    first = Reply(text="Hello! gpt-4o-mini ")
    events = before_final("openai-responses", first)
    server.script(
        Broken(first, after=events, how="close"), Broken(first, after=events, how="close")
    )
    with pytest.raises(ProviderError) as caught:
        await make_provider("openai-responses", max_retries=1).complete(ASK)
    assert "ended the stream before the answer was complete (no response.completed)" in str(
        caught.value
    )
    assert outcomes(caught.value.attempts) == ["broken stream", "broken stream"]


@pytest.mark.parametrize("keep_alive", [False, True], ids=["eof", "unfinished-chunked-body"])
async def test_a_stream_cut_off_after_text_was_shown_says_what_happened(
    kind: str, keep_alive: bool, make_provider: MakeProvider
) -> None:
    first = Reply(text="Hello! gpt-4o-mini ")
    with FakeLLMServer(keep_alive=keep_alive) as fake:
        fake.script(Broken(first, after=before_final(kind, first), how="close"))
        shown: list[str] = []
        provider = make_provider(kind, base_url=base_url(kind, fake))
        with pytest.raises(StreamInterruptedError) as caught:
            await provider.complete(ASK, on_text=shown.append)
        assert len(fake.requests) == 1
    assert "".join(shown) == first.text
    message = str(caught.value)
    assert "cannot reach" not in message and "check base_url" not in message
    if keep_alive:
        assert "broke off in the middle of the answer" in message
    else:
        assert f"ended the stream before the answer was complete (no {FINAL[kind]})" in message
    assert "`roost retry` asks again" in message


async def test_a_reset_in_the_middle_of_an_answer_is_not_called_unreachable(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    reply = Reply(text="Hello world")
    server.script(Broken(reply, after=before_final(kind, reply), how="reset"))
    with pytest.raises(StreamInterruptedError) as caught:
        await make_provider(kind).complete(ASK, on_text=lambda _: None)
    message = str(caught.value)
    assert "broke off in the middle of the answer" in message
    assert "cannot reach" not in message


# --------------------------------------------------------------------------- finish reasons

# (kind, the API's own word, cut, refused): every finish reason each API documents.
FINISHES = [
    ("openai", "stop", False, False),
    ("openai", "length", True, False),
    ("openai", "tool_calls", False, False),
    ("openai", "content_filter", False, True),
    ("openai", "function_call", False, False),
    ("openai-responses", "completed", False, False),
    ("openai-responses", "max_output_tokens", True, False),
    ("openai-responses", "content_filter", False, True),
    ("openai-responses", "max_messages", False, False),
    ("anthropic", "end_turn", False, False),
    ("anthropic", "max_tokens", True, False),
    ("anthropic", "stop_sequence", False, False),
    ("anthropic", "tool_use", False, False),
    ("anthropic", "refusal", False, True),
    ("anthropic", "model_context_window_exceeded", True, False),
]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize(("kind", "reason", "cut", "refused"), FINISHES)
async def test_every_finish_reason_is_recorded_and_read(
    kind: str,
    reason: str,
    cut: bool,
    refused: bool,
    stream: bool,
    server: FakeLLMServer,
    make_provider: MakeProvider,
) -> None:
    server.script(Reply(text="The answer is", finish=reason))
    response = await make_provider(kind, stream=stream).complete(ASK)
    assert response.message.content == "The answer is"
    assert (response.finish_reason, response.cut, response.refused) == (reason, cut, refused)


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", ["openai", "openai-responses"])
async def test_a_refusal_is_the_reply_and_is_marked(
    kind: str, stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Reply(refusal="I can't help with that."))
    shown: list[str] = []
    provider = make_provider(kind, stream=stream)
    response = await provider.complete(ASK, on_text=shown.append)
    assert response.message.content == "I can't help with that."
    assert response.refused and not response.cut
    assert "".join(shown) == (response.message.content if stream else "")


@pytest.mark.parametrize("stream", [True, False])
async def test_anthropic_pause_turn_continues_the_turn(
    stream: bool, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Reply(text="Searching... ", finish="pause_turn"), Reply(text="found it."))
    shown: list[str] = []
    response = await make_provider("anthropic", stream=stream).complete(ASK, on_text=shown.append)
    assert response.message.content == "Searching... found it."
    assert (response.finish_reason, response.cut) == ("end_turn", False)
    assert response.usage.prompt_tokens == 24 and response.usage.completion_tokens == 14
    # The paused answer went back as the last assistant turn, for the model to go on from.
    first, second = (r.body["messages"] for r in server.requests)
    assert second == [
        *first,
        {"role": "assistant", "content": [{"type": "text", "text": "Searching... "}]},
    ]
    if stream:
        assert "".join(shown) == "Searching... found it."


async def test_a_turn_that_stays_paused_is_kept_as_cut(
    server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    from roost.providers.anthropic import MAX_PAUSES

    server.script(*[Reply(text=f"{n} ", finish="pause_turn") for n in range(MAX_PAUSES + 1)])
    response = await make_provider("anthropic").complete(ASK)
    assert len(server.requests) == MAX_PAUSES + 1 and server.remaining == 0
    assert response.message.content == "".join(f"{n} " for n in range(MAX_PAUSES + 1))
    assert (response.finish_reason, response.cut) == ("pause_turn", True)


# --------------------------------------------------------------------------- tool names


@pytest.mark.parametrize("chunk_size", [1, 3, 5])
async def test_a_tool_name_split_across_fragments_is_joined(
    chunk_size: int, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    calls = (
        FakeCall("lookup_weather", {"city": "Oslo"}, id="c1"),
        FakeCall("add", {"a": 2}, id="c2"),
    )
    server.script(Reply(calls=calls, split_names=True, chunk_size=chunk_size))
    response = await make_provider("openai").complete(ASK)
    assert [(c.id, c.name, c.arguments) for c in response.message.tool_calls] == [
        ("c1", "lookup_weather", {"city": "Oslo"}),
        ("c2", "add", {"a": 2}),
    ]
    rendered = events_of("openai", Reply(calls=calls, split_names=True, chunk_size=chunk_size))
    assert sum('"name"' in data for _, data in rendered) > len(calls)  # really split


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "headers", [{}, {"retry-after": "0"}, {"retry-after-ms": "1"}], ids=["none", "s", "ms"]
)
async def test_rate_limits_with_and_without_retry_after_are_retried(
    kind: str, headers: dict[str, str], server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Status(429, "slow down", "rate_limit_error", headers), Reply(text="ok"))
    response = await make_provider(kind).complete(ASK)
    assert response.message.content == "ok"
    assert outcomes(response.attempts) == ["http 429", "ok"]


@pytest.mark.parametrize("headers", [{}, {"retry-after": "0"}], ids=["none", "retry-after"])
async def test_a_rate_limit_that_lasts_is_one_clear_line(
    kind: str, headers: dict[str, str], server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Status(429, "slow down", "rate_limit_error", headers))
    with pytest.raises(ProviderError) as caught:
        await make_provider(kind, max_retries=0).complete(ASK)
    assert str(caught.value) == (
        "provider 'llm': rate limited (HTTP 429: slow down) after its retries; wait, or add a "
        "fallback"
    )


async def test_a_request_the_server_cannot_read_gets_a_400_in_the_apis_format(
    kind: str, server: FakeLLMServer
) -> None:
    path = PATH.get(kind, "/v1/messages")
    async with httpx2.AsyncClient(base_url=server.url) as client:
        broken = await client.post(path, content=b'{"model": "m", "messages": [')
        no_model = await client.post(path, json={"messages": [{"role": "user", "content": "x"}]})
    assert broken.status_code == no_model.status_code == 400
    error = broken.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"] == "could not parse the JSON body of the request"
    assert no_model.json()["error"]["message"] == "model: a model name is required"
    assert server.remaining == 0 and len(server.requests) == 2


async def test_a_400_is_reported_in_one_line_and_not_retried(
    kind: str, server: FakeLLMServer, make_provider: MakeProvider
) -> None:
    server.script(Reply(text="never sent"))  # the malformed request takes no scripted answer
    empty = ModelRequest()  # no message at all: every API refuses that
    with pytest.raises(ProviderError) as caught:
        await make_provider(kind).complete(empty)
    key = "input" if kind == "openai-responses" else "messages"
    assert str(caught.value) == (
        f"provider 'llm': request refused (HTTP 400: {key}: at least one message is required)"
    )
    assert len(server.requests) == 1 and server.remaining == 1
