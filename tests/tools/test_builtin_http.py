"""builtin#http_get against a real HTTP server on 127.0.0.1: hosts, size and time limits."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from roost.tools import toolbox_for

from .conftest import make_flow

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from roost.tools.base import Tool

BIG = b"x" * 5000


class Site:
    """A small web site in a thread; ``paths`` lists every path it was asked for."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.stop = threading.Event()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.paths.append(self.path)
                route = getattr(site, "page_" + self.path.strip("/").replace("-", "_"), None)
                if route is None:
                    self._send(404, b"no such page")
                else:
                    route(self)

            def _send(self, status: int, body: bytes, kind: str = "text/plain") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                pass

        self.handler = Handler
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def page_hello(self, h: Any) -> None:
        h._send(200, "héllo from the site".encode(), "text/plain; charset=utf-8")

    def page_big(self, h: Any) -> None:
        h._send(200, BIG)

    def page_big_unannounced(self, h: Any) -> None:
        # No Content-Length: the size is only seen while the body arrives.
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Connection", "close")
        h.end_headers()
        for _ in range(50):
            h.wfile.write(b"y" * 1000)

    def page_slow(self, h: Any) -> None:
        # Headers at once, then a byte now and then: never done within the time limit.
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", "1000")
        h.end_headers()
        while not self.stop.wait(0.05):
            h.wfile.write(b".")
            h.wfile.flush()

    def page_page(self, h: Any) -> None:
        h._send(200, b"<p>a page</p>", "text/html; charset=utf-8")

    def page_data(self, h: Any) -> None:
        h._send(200, b'{"a": 1}', "application/problem+json")

    def page_image(self, h: Any) -> None:
        h._send(200, b"\x89PNG\r\n", "image/png")

    def page_to_hello(self, h: Any) -> None:
        self._redirect(h, "/hello")

    def page_to_elsewhere(self, h: Any) -> None:
        self._redirect(h, self.url("/hello", host="localhost"))

    def page_forever(self, h: Any) -> None:
        self._redirect(h, "/forever")

    @staticmethod
    def _redirect(h: Any, location: str) -> None:
        h.send_response(302)
        h.send_header("Location", location)
        h.send_header("Content-Length", "0")
        h.end_headers()


@pytest.fixture
def site() -> Iterator[Site]:
    running = Site()
    thread = threading.Thread(target=running.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield running
    finally:
        running.stop.set()
        running.server.shutdown()
        running.server.server_close()


def http_get(folder: Path, **http: Any) -> Tool:
    settings = {"hosts": ["127.0.0.1"], **http}
    flow = make_flow(
        {"builtins": {"http": settings}, "agents": {"a": {"functions": ["builtin#http_get"]}}},
        folder,
    )
    (tool,) = toolbox_for(flow)("a")
    return tool


async def get(tool: Tool, url: str) -> tuple[str, bool]:
    outcome = await tool.call({"url": url})
    return outcome.content, outcome.is_error


async def test_a_page_of_an_allowed_host_is_fetched_as_text(site: Site, tmp_path: Path) -> None:
    text, failed = await get(http_get(tmp_path), site.url("/hello"))
    assert not failed
    assert text == (
        f"HTTP 200 OK\nURL: {site.url('/hello')}\nContent-Type: text/plain; charset=utf-8\n\n"
        "héllo from the site"
    )
    text, failed = await get(http_get(tmp_path), site.url("/missing"))
    assert failed and text.startswith("HTTP 404 Not Found") and text.endswith("no such page")


async def test_a_host_not_on_the_list_is_never_asked(site: Site, tmp_path: Path) -> None:
    tool = http_get(tmp_path)
    for url in [
        site.url("/hello", host="localhost"),  # the same server, under a name not allowed
        f"http://127.0.0.1@localhost:{site.port}/hello",  # the host is what follows the @
        f"http://127.0.0.1.example.com:{site.port}/hello",
    ]:
        text, failed = await get(tool, url)
        assert failed and "is not allowed (allowed hosts: 127.0.0.1)" in text, text
    for url in ["file:///etc/passwd", "ftp://127.0.0.1/x"]:
        text, failed = await get(tool, url)
        assert failed and "only http and https URLs can be fetched" in text
    assert site.paths == []


async def test_redirects_are_followed_only_to_allowed_hosts(site: Site, tmp_path: Path) -> None:
    tool = http_get(tmp_path)
    text, failed = await get(tool, site.url("/to-hello"))
    assert not failed and text.endswith("héllo from the site")
    text, failed = await get(tool, site.url("/to-elsewhere"))
    assert failed and "host 'localhost' is not allowed" in text
    text, failed = await get(tool, site.url("/forever"))
    assert failed and "redirected more than 5 times" in text
    assert site.paths == ["/to-hello", "/hello", "/to-elsewhere", *["/forever"] * 6]


async def test_an_answer_over_the_size_limit_is_refused(site: Site, tmp_path: Path) -> None:
    tool = http_get(tmp_path, max_bytes=4000)
    text, failed = await get(tool, site.url("/big"))
    assert (text, failed) == ("the answer has 5000 bytes, over the limit of 4000", True)
    text, failed = await get(tool, site.url("/big-unannounced"))
    assert (text, failed) == ("the answer is over the limit of 4000 bytes", True)
    text, failed = await get(http_get(tmp_path, max_bytes=5000), site.url("/big"))
    assert not failed and text.endswith(BIG.decode())


async def test_an_answer_slower_than_the_time_limit_is_given_up(site: Site, tmp_path: Path) -> None:
    tool = http_get(tmp_path, timeout=0.5)
    text, failed = await get(tool, site.url("/slow"))
    assert failed and text == f"no complete answer to GET {site.url('/slow')} within 0.5 s"


async def test_html_and_json_answers_are_text(site: Site, tmp_path: Path) -> None:
    text, failed = await get(http_get(tmp_path), site.url("/page"))
    assert not failed and text.endswith("\n\n<p>a page</p>")
    text, failed = await get(http_get(tmp_path), site.url("/data"))
    assert not failed and text.endswith('\n\n{"a": 1}')


async def test_an_answer_that_is_not_text_is_refused(site: Site, tmp_path: Path) -> None:
    text, failed = await get(http_get(tmp_path), site.url("/image"))
    assert (text, failed) == ("the answer is image/png, not text", True)


async def test_a_server_that_is_not_there_is_an_error_result(tmp_path: Path) -> None:
    text, failed = await get(http_get(tmp_path), "http://127.0.0.1:9/")
    assert failed and text.startswith("GET http://127.0.0.1:9/ failed: ConnectError")


@pytest.mark.parametrize(
    ("host", "allowed", "matches"),
    [
        ("example.com", "example.com", True),
        ("docs.example.com", "example.com", False),
        ("docs.example.com", "*.example.com", True),
        ("a.b.example.com", "*.example.com", True),
        ("example.com", "*.example.com", False),
        ("badexample.com", "*.example.com", False),
    ],
)
def test_a_star_allows_the_subdomains_only(host: str, allowed: str, matches: bool) -> None:
    from roost.tools.builtin_http import _matches

    assert _matches(host, allowed) is matches
