"""``builtin#http_get``: one GET to a host the flow allows, bounded in size and time.

The host of every URL, and of every redirect it leads to, must be on the
flow's ``builtins.http.hosts`` (``*.example.com`` matching the subdomains of
example.com); the scheme must be http or https. The whole exchange, redirects
included, must finish within ``timeout`` seconds, and a body over
``max_bytes`` is refused as soon as it is seen to be (from its
``Content-Length``, else while it arrives). Proxies from the environment are
not used, and the answer must be text (a body of images or archives is
refused), so the model only ever sees text from an allowed host.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import httpx2

from roost.tools.refused import Refused

if TYPE_CHECKING:
    from roost.flow.models import BuiltinHttp

MAX_REDIRECTS = 5
_TEXT_TYPES = ("json", "xml", "javascript", "yaml", "x-www-form-urlencoded", "csv")


async def http_get(url: str, settings: BuiltinHttp) -> tuple[str, bool]:
    """The answer to a GET of ``url`` as text for the model, and whether it is an error."""
    try:
        async with asyncio.timeout(settings.timeout):
            return await _follow(url, settings)
    except TimeoutError:
        raise Refused(f"no complete answer to GET {url} within {settings.timeout:g} s") from None
    except httpx2.InvalidURL as exc:
        raise Refused(f"{url!r} is not a valid URL: {exc}") from None
    except httpx2.HTTPError as exc:
        raise Refused(f"GET {url} failed: {type(exc).__name__}: {exc}") from None


async def _follow(url: str, settings: BuiltinHttp) -> tuple[str, bool]:
    """GETs ``url``, following at most MAX_REDIRECTS redirects, each to an allowed host."""
    headers = {"Accept-Encoding": "identity", "User-Agent": "roost builtin#http_get"}
    async with httpx2.AsyncClient(
        follow_redirects=False, trust_env=False, timeout=settings.timeout, headers=headers
    ) as client:
        target = _allowed(httpx2.URL(url), settings.hosts)
        for _ in range(MAX_REDIRECTS + 1):
            async with client.stream("GET", target) as response:
                if response.is_redirect and "location" in response.headers:
                    location = response.headers["location"]
                    target = _allowed(response.url.join(location), settings.hosts)
                    continue
                body = await _body(response, settings.max_bytes)
                return _answer(response, body), response.is_error
    raise Refused(f"GET {url} was redirected more than {MAX_REDIRECTS} times")


def _allowed(url: httpx2.URL, hosts: list[str]) -> httpx2.URL:
    """``url`` when its scheme is http(s) and its host is allowed; else Refused."""
    if url.scheme not in ("http", "https"):
        raise Refused(f"{str(url)!r}: only http and https URLs can be fetched")
    host = url.host.lower().rstrip(".")
    if not host:
        raise Refused(f"{str(url)!r} names no host")
    if not any(_matches(host, allowed) for allowed in hosts):
        listed = ", ".join(hosts) or "none"
        raise Refused(f"host {host!r} is not allowed (allowed hosts: {listed})")
    return url


def _matches(host: str, allowed: str) -> bool:
    if allowed.startswith("*."):
        return host.endswith(allowed[1:]) and len(host) > len(allowed) - 1
    return host == allowed


async def _body(response: httpx2.Response, limit: int) -> bytes:
    """The body of ``response``, refused once it is seen to be over ``limit`` bytes."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise Refused(f"the answer has {declared} bytes, over the limit of {limit}")
    content_type = response.headers.get("content-type", "")
    if not _is_text(content_type):
        raise Refused(f"the answer is {content_type.split(';')[0]}, not text")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise Refused(f"the answer is over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _is_text(content_type: str) -> bool:
    kind = content_type.split(";")[0].strip().lower()
    return not kind or kind.startswith("text/") or any(part in kind for part in _TEXT_TYPES)


def _answer(response: httpx2.Response, body: bytes) -> str:
    """Status line, content type and the body decoded as its charset says (else UTF-8)."""
    try:
        text = body.decode(response.encoding or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        text = body.decode("utf-8", errors="replace")
    content_type = response.headers.get("content-type", "unknown")
    status = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
    return f"{status}\nURL: {response.url}\nContent-Type: {content_type}\n\n{text}"
