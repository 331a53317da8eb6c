"""Hostile model servers: bodies without end or of any size, wrong shapes, redirects away.

A server on 127.0.0.1 answers every request the same hostile way, in front of
the real OpenAI and Anthropic SDKs. Each must end the call with one readable
``ProviderError`` (never a hang, never an empty answer taken for a reply,
never a request sent on to another server), and in a run the error entry must
leave the run resumable: ``roost retry`` finishes it once the server behaves.
(Resets, stalls, rate limits, HTML pages and error events are in
``tests/providers/test_faults.py`` and ``test_edges.py``.)
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest
from cli_process import run_cli
from pydantic import TypeAdapter

from roost.errors import ProviderError
from roost.flow.models import ProviderConfig
from roost.messages import ModelRequest, UserMessage
from roost.providers._common import MAX_ANSWER_CHARS
from roost.providers.base import ProviderContext
from roost.providers.registry import _factory
from tests.attacks.conftest import Cli, Said

if TYPE_CHECKING:
    from pathlib import Path

KEY = "sk-hostile-test-5150"
KINDS = ("openai", "openai-responses", "anthropic")
ASK = ModelRequest(system="s", messages=(UserMessage(content="hi"),))

Handler = Callable[[BaseHTTPRequestHandler], None]


def _send(handler: BaseHTTPRequestHandler, status: int, kind: str, body: bytes) -> None:
    handler.send_response(status)
    handler.send_header("content-type", kind)
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _chat(text: str) -> bytes:
    return json.dumps({
        "id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }).encode()  # fmt: skip


def answering(text: str) -> Handler:
    """A sound Chat Completions answer (not streamed)."""
    return lambda handler: _send(handler, 200, "application/json", _chat(text))


def endless(handler: BaseHTTPRequestHandler) -> None:
    """A 200 whose body never ends: one more piece of text every few milliseconds."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.end_headers()
    piece = b'data: {"choices":[{"index":0,"delta":{"content":"more "}}]}\n\n: ping\n\n'
    try:
        while True:
            handler.wfile.write(piece)
            handler.wfile.flush()
            threading.Event().wait(0.002)
    except OSError:  # the client hung up: what the test wants
        return


def huge(handler: BaseHTTPRequestHandler) -> None:
    """A whole, quick answer longer than any model writes."""
    _send(handler, 200, "application/json", _chat("y" * (MAX_ANSWER_CHARS + 1)))


def huge_stream(handler: BaseHTTPRequestHandler) -> None:
    """A quick stream that ends properly, after more text than any model writes."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.end_headers()
    piece = json.dumps({"choices": [{"index": 0, "delta": {"content": "z" * (1 << 20)}}]})
    try:
        for _ in range((MAX_ANSWER_CHARS >> 20) + 2):
            handler.wfile.write(f"data: {piece}\n\n".encode())
        handler.wfile.write(b"data: [DONE]\n\n")
    except OSError:
        return


def redirect(status: int, target: str) -> Handler:
    def send(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        handler.send_header("location", target + handler.path)
        handler.send_header("content-length", "0")
        handler.end_headers()

    return send


class Hostile:
    """A server on 127.0.0.1 whose answer to every POST is ``self.answer``; it records paths."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.answer: Handler = answering("fine")
        self.paths: list[str] = []
        server = self

        class Answer(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # a body without a length ends with the connection

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                server.paths.append(self.path)
                server.answer(self)

        self._http = ThreadingHTTPServer((host, 0), Answer)
        self._http.daemon_threads = True
        self._http.block_on_close = False
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    server = Hostile()
    yield server
    server.close()


@pytest.fixture
def elsewhere() -> Iterator[Hostile]:
    """Another server, on another address: a redirect's target, which must hear nothing."""
    server = Hostile("127.0.0.2")
    yield server
    server.close()


def provider(kind: str, server: Hostile, **options: Any) -> Any:
    url = server.url if kind == "anthropic" else server.url + "/v1"
    settings = {"kind": kind, "model": "m", "base_url": url, "api_key": KEY, "max_retries": 0}
    config = TypeAdapter(ProviderConfig).validate_python({**settings, **options})
    return _factory(kind)("llm", config, ProviderContext(secrets=frozenset({KEY})))


async def failure(kind: str, server: Hostile, **options: Any) -> str:
    """The one line a call to ``server`` fails with (a hang fails the test after 60 s)."""
    with pytest.raises(ProviderError) as caught:
        await asyncio.wait_for(provider(kind, server, **options).complete(ASK), 60)
    message = str(caught.value)
    assert "\n" not in message and KEY not in message
    assert message.startswith("provider 'llm': ")
    return message.removeprefix("provider 'llm': ")


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("kind", KINDS)
async def test_a_body_without_end_is_cut_off(kind: str, stream: bool, hostile: Hostile) -> None:
    hostile.answer = endless
    message = await failure(kind, hostile, stream=stream, timeout=0.4)
    assert "kept sending but had not finished its answer after 0.8 s" in message


async def test_a_whole_answer_longer_than_any_model_writes_is_refused(hostile: Hostile) -> None:
    hostile.answer = huge
    message = await failure("openai", hostile, stream=False, timeout=60)
    assert message.endswith("sent an answer of more than 8 MiB of text, longer than any model "
                            "writes; it was refused")  # fmt: skip


async def test_a_streamed_answer_longer_than_any_model_writes_is_refused(hostile: Hostile) -> None:
    hostile.answer = huge_stream
    shown: list[str] = []
    with pytest.raises(ProviderError, match="sent an answer of more than 8 MiB of text"):
        await provider("openai", hostile, timeout=60).complete(ASK, on_text=shown.append)
    assert sum(map(len, shown)) <= MAX_ANSWER_CHARS


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("kind", KINDS)
async def test_a_redirect_is_refused_and_sends_nothing_on(
    kind: str, status: int, hostile: Hostile, elsewhere: Hostile
) -> None:
    hostile.answer = redirect(status, elsewhere.url)
    message = await failure(kind, hostile)
    assert f"answered with a redirect (HTTP {status}) to {elsewhere.url}/" in message
    assert "check base_url" in message
    assert elsewhere.paths == []  # neither the conversation nor the key went there


async def test_a_redirect_off_this_machine_names_where_it_pointed(hostile: Hostile) -> None:
    hostile.answer = redirect(307, "http://203.0.113.7")
    message = await failure("openai", hostile)
    assert "redirect (HTTP 307) to http://203.0.113.7/v1/chat/completions" in message


ERROR_BODY = json.dumps({"error": {"message": "internal failure", "type": "server_error"}})


NO_ANSWER = [
    pytest.param(kind, missing, body, id=f"{kind}-{name}")
    for kind, missing in (("openai", "choices"), ("openai-responses", "output"),
                          ("anthropic", "content"))
    for name, body in (("error body", ERROR_BODY), ("empty object", "{}"),
                       ("another API", _chat("an answer in another API's shape").decode()))
    if not (kind == "openai" and name == "another API")  # that one is Chat's own shape
]  # fmt: skip


@pytest.mark.parametrize(("kind", "missing", "body"), NO_ANSWER)
async def test_a_200_that_holds_no_answer_is_an_error_not_an_empty_reply(
    kind: str, missing: str, body: str, hostile: Hostile
) -> None:
    hostile.answer = lambda handler: _send(handler, 200, "application/json", body.encode())
    assert (await failure(kind, hostile, stream=False)).endswith(f"answered with no {missing}")


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (b'{"id": "c", "choices": [ {"message": ', "unexpected failure: JSONDecodeError: "),
        (b"", "unexpected failure: JSONDecodeError: Expecting value"),
        (b"\x00\x80\xff" * 100, "unexpected failure: JSONDecodeError: "),
    ],
    ids=["cut JSON", "empty body", "binary"],
)
@pytest.mark.parametrize("kind", KINDS)
async def test_a_body_that_is_no_json_is_one_line(
    kind: str, answer: bytes, said: str, hostile: Hostile
) -> None:
    hostile.answer = lambda handler: _send(handler, 200, "application/json", answer)
    assert said in await failure(kind, hostile, stream=False)


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/plain", b"hello, I am no API"),
        ("application/octet-stream", bytes(range(256)) * 20),
        ("application/json", _chat("a whole body where a stream was asked for")),
        ("text/event-stream", b"data: {not json\n\ndata: [DONE]\n\n"),
    ],
    ids=["text", "binary", "JSON", "broken events"],
)
@pytest.mark.parametrize("kind", KINDS)
async def test_a_stream_of_the_wrong_type_is_one_line(
    kind: str, content_type: str, body: bytes, hostile: Hostile
) -> None:
    hostile.answer = lambda handler: _send(handler, 200, content_type, body)
    await failure(kind, hostile, stream=True)


FLOW = """\
roost: 1
name: hostile
providers:
  llm: {kind: openai, model: m, base_url: "URL/v1", api_key: "${HOSTILE_KEY}", stream: false,
        timeout: TIMEOUT, max_retries: 0}
agents:
  USER: {interrupt: ALWAYS}
  bot: {provider: llm}
start: {from: USER, to: bot, content: hi}
"""


# The endless answer is cut at its timeout, kept short so the test is quick; the others come
# at once, and a timeout that long only keeps a busy machine from cutting them first.
QUICK, AMPLE = "0.4", "30"


@pytest.mark.parametrize(
    ("answer", "timeout", "said"),
    [
        (endless, QUICK, "kept sending but had not finished its answer after 0.8 s"),
        (huge, AMPLE, "sent an answer of more than 8 MiB of text"),
        (redirect(307, "http://203.0.113.7"), AMPLE, "answered with a redirect (HTTP 307)"),
        (lambda h: _send(h, 200, "application/json", ERROR_BODY.encode()), AMPLE,
         "with no choices"),
    ],
    ids=["endless", "huge", "redirect", "error body"],
)  # fmt: skip
def test_a_run_stops_at_one_error_line_and_retry_finishes_it(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hostile: Hostile,
    answer: Handler, timeout: str, said: str,
) -> None:  # fmt: skip
    monkeypatch.setenv("HOSTILE_KEY", KEY)
    flow = FLOW.replace("URL", hostile.url).replace("TIMEOUT", timeout)
    (tmp_path / "flow.yaml").write_text(flow)
    hostile.answer = answer
    # In a child process: a run that never ends fails at run_cli's timeout, not the suite.
    done = run_cli("run", "flow.yaml", "--no-input", "--events", "run.jsonl", cwd=tmp_path)
    ran = Said(done.returncode, done.stdout, done.stderr)
    assert ran.code == 3
    assert ran.lines[0].startswith("roost: error at bot: provider 'llm': ")
    assert said in ran.lines[0] and KEY not in ran.out + ran.err
    assert len((tmp_path / "run.jsonl").read_text()) < 1 << 20  # no 8 MiB answer was kept
    hostile.answer = answering("now a fine answer")
    # The retry raises a quick timeout, as the error line advises: even a fine answer may take
    # longer than 0.8 s on a busy machine.
    (tmp_path / "ample.yaml").write_text(flow.replace(f"timeout: {QUICK},", f"timeout: {AMPLE},"))
    retried = cli("retry", "run.jsonl", *(("--flow", "ample.yaml") if timeout == QUICK else ()))
    assert retried.code == 0, retried.err
    assert "bot → USER: now a fine answer" in retried.out
