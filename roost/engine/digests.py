"""The ``request_digest`` of an ``llm_call``: what a replay compares to see a request change.

A digest ``sha256:2:<hex>`` covers what is sent to the model: the system
prompt, the names of the tools offered, every message as the model is shown
it (through the view's digest, which covers the entries shown, who speaks, the
texts that frame them, their times when the flow shows times, and the context
files' text), the messages of a tool round, and the settings of the provider
entry (and its fallbacks) that shape the request: ``kind``, ``model``,
``max_tokens``, ``temperature``, ``thinking``, ``reasoning``. A tool's
description and schema are not in it: a replay, which imports and starts no
tool, cannot know them.

Runs recorded before this form have digests ``sha256:<hex>`` that cover the
prompt, the tool names and the entries shown only. A replay digests each call
recorded that way the old way (a replay's ``Sources.legacy_digests``), so an old run replays
``identical`` when nothing changed; such a replay does not see a change the
old form did not cover (times shown, provider settings).
"""

from __future__ import annotations

import json
import re
from hashlib import sha256
from typing import TYPE_CHECKING, Any

from roost.nodes.agent import ViewDigest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from hashlib import _Hash

    from roost.flow.models import Flow
    from roost.messages import ChatMessage, ToolSpec

FULL_FORM = "sha256:2:"
LEGACY_FORM = "sha256:"
_LEGACY = re.compile(r"sha256:[0-9a-f]{64}")

# Provider keys that change what is asked of the model; not where or how it is asked
# (base_url, api_key, timeout, retries, streaming) nor how history is compressed.
REQUEST_SETTINGS = frozenset(
    {"kind", "model", "max_tokens", "temperature", "thinking", "reasoning"}
)


class RequestDigest:
    """A request's digest, all but the provider's settings, which the caller adds.

    It can also give the form roost recorded before ``FULL_FORM`` (``legacy=True``):
    a replay of a run recorded then digests that run's calls the old way, worked out
    only when asked.
    """

    __slots__ = ("_hash", "_legacy")

    def __init__(
        self, running: _Hash | None, legacy: tuple[str, str, bytes, Sequence[ChatMessage]] | None
    ) -> None:
        self._hash = running
        self._legacy = legacy  # what the old form digests: prompt, tool names, history

    def finish(self, settings: bytes, *, legacy: bool = False) -> str:
        """The digest text, ``settings`` (``request_settings``, encoded) included."""
        if legacy and self._legacy is not None:
            return _legacy_digest(*self._legacy)
        if self._hash is None:
            return ""
        running = self._hash.copy()
        running.update(settings)
        return FULL_FORM + running.hexdigest()


def request_digest(
    system: str,
    tools: Sequence[ToolSpec],
    base: ViewDigest | bytes,
    tail: Iterable[ChatMessage],
) -> RequestDigest:
    """The digest of a request of ``system``, ``tools`` offered, the view digested in
    ``base`` (a director, whose messages are all in ``tail``, gives ``b""``) and ``tail``.
    """
    full, legacy = base if isinstance(base, ViewDigest) else (base, base)
    names = ",".join(tool.name for tool in tools) if tools else ""
    tail = tail if isinstance(tail, list | tuple) else tuple(tail)  # read twice at most
    running = _prefix(b"roost request 2\x1e", system, names)
    running.update(len(full).to_bytes(4, "big") + full)
    for message in tail:
        running.update(message.model_dump_json().encode())
    running.update(b"\x1e")  # the settings follow
    return RequestDigest(running, (system, names, legacy, tail))


def is_legacy_digest(digest: str) -> bool:
    """Whether ``digest`` is of the form roost recorded before ``FULL_FORM``."""
    return _LEGACY.fullmatch(digest) is not None


def request_settings(flow: Flow, provider: str) -> str:
    """The settings of ``provider`` and its fallbacks that shape a request, as one text."""
    entries: list[dict[str, Any]] = []

    def add(name: str) -> None:  # the fallback chain, in the order the registry builds it
        config = flow.providers.get(name)
        if config is None or any(entry["name"] == name for entry in entries):
            return
        shaping = config.model_dump(mode="json", include=set(REQUEST_SETTINGS))
        entries.append({"name": name, **shaping})
        for other in config.fallback:
            add(other)

    add(provider)
    return json.dumps(entries, sort_keys=True) if entries else ""


def settings_of(flow: Flow) -> Callable[[str], bytes]:
    """``request_settings`` of ``flow``'s entries, encoded, each worked out once."""
    known: dict[str, bytes] = {}

    def settings(provider: str) -> bytes:
        found = known.get(provider)
        if found is None:
            found = known[provider] = request_settings(flow, provider).encode()
        return found

    return settings


def _legacy_digest(system: str, names: str, base: bytes, tail: Iterable[ChatMessage]) -> str:
    """The digest as roost made it before ``FULL_FORM``: prompt, tool names, history."""
    running = _prefix(b"", system, names)
    running.update(base)
    for message in tail:
        running.update(message.model_dump_json().encode())
    return LEGACY_FORM + running.hexdigest()


def _prefix(form: bytes, system: str, tools: str) -> _Hash:
    """A running hash of the prompt and the tool names, worked out once per distinct pair."""
    key = (form, system, tools)
    prefix = _PREFIXES.get(key)
    if prefix is None:
        # The prompt and the tools rarely change between the calls of a run: hashed once.
        if len(_PREFIXES) >= 256:
            _PREFIXES.clear()
        prefix = _PREFIXES[key] = sha256(
            form + system.encode() + b"\x1e" + tools.encode() + b"\x1e"
        )
    return prefix.copy()


_PREFIXES: dict[tuple[bytes, str, str], _Hash] = {}
