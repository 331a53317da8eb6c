"""Helpers for testing flows, and code that runs them, offline.

``flow_from_yaml(text, replies=[...])`` is a flow written in the test itself,
answered by a scripted provider (``unchecked_flow`` is one the checks would refuse,
its tools given in code); ``scripted("Hi!", "TERMINATE")`` is such a
provider on its own, to hand to ``Runner(..., providers=...)``. Replies are
written as in a flow file: a string is the model's answer, ``call(name, **arguments)``
asks for a tool, ``fail(message)`` is a model call that fails.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import yaml

from roost.errors import UsageError
from roost.flow import Flow, check_flow_text, load_flow_text
from roost.flow.loader import unchecked_flow as _unchecked
from roost.flow.models import ScriptedProviderConfig
from roost.loading import with_tools
from roost.providers.scripted import ScriptedProvider

Reply = str | Mapping[str, Any]
WhenExhausted = Literal["error", "repeat_last", "cycle"]

SCRIPTED = "scripted"  # the name of the provider ``flow_from_yaml(replies=...)`` adds


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A reply that asks for one tool call: ``call("mean", data=[1, 2])``."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def fail(message: str) -> dict[str, str]:
    """A reply that is a failed model call, as a provider error saying ``message``."""
    return {"error": message}


def scripted(
    *replies: Reply, when_exhausted: WhenExhausted = "error", name: str = SCRIPTED
) -> ScriptedProvider:
    """A provider answering with ``replies`` in order, across every node that uses it."""
    config = _scripted_config(replies, when_exhausted)
    return ScriptedProvider(name, ScriptedProviderConfig.model_validate(config))


def flow_from_yaml(
    text: str,
    *,
    replies: Sequence[Reply] | None = None,
    when_exhausted: WhenExhausted = "error",
    path: str | os.PathLike[str] = "flow.yaml",
    environ: Mapping[str, str] | None = None,
) -> Flow:
    """The flow ``text`` describes, loaded and checked as ``roost.load_flow`` checks a file.

    ``text`` is dedented first, so it may be indented like the test around it.
    With ``replies``, the flow gets a provider named ``scripted`` answering with
    them, and it becomes the default provider (``defaults.provider``); a flow
    that names a default provider of its own, or a provider of that name, is
    refused; the text is then written out again, so a problem's line is one of
    the text as rewritten. ``path`` is the file the flow's problems name, and the folder of
    its relative tool paths; ``environ`` replaces ``os.environ`` for
    ``${NAME}`` placeholders. Raises ``FlowError`` as ``load_flow`` does.
    """
    text, file = textwrap.dedent(text), os.fspath(path)
    if replies is not None:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            load_flow_text(text, file, environ=environ)  # raises the located FlowError
            raise
        text = _with_scripted_provider(data, replies, when_exhausted)
    return with_tools(check_flow_text(text, file, environ=environ))


def _with_scripted_provider(data: Any, replies: Sequence[Reply], when: WhenExhausted) -> str:
    """The flow ``data`` with the scripted provider added and made the default, as YAML."""
    if not isinstance(data, dict):
        raise UsageError("flow_from_yaml: the text is not a flow (a YAML mapping)")
    providers, defaults = data.get("providers") or {}, data.get("defaults") or {}
    if not isinstance(providers, dict) or not isinstance(defaults, dict):
        raise UsageError("flow_from_yaml: replies= needs providers and defaults to be mappings")
    if SCRIPTED in providers:
        raise UsageError(f"flow_from_yaml: the flow has a provider {SCRIPTED!r}; drop replies=")
    if "provider" in defaults:
        raise UsageError(
            f"flow_from_yaml: the flow's default provider is {defaults['provider']!r}; "
            "replies= would answer for nobody"
        )
    data["providers"] = {**providers, SCRIPTED: _scripted_config(replies, when)}
    data["defaults"] = {**defaults, "provider": SCRIPTED}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _scripted_config(replies: Sequence[Reply], when: WhenExhausted) -> dict[str, Any]:
    config: dict[str, Any] = {"kind": "scripted", "replies": [_plain(r) for r in replies]}
    if when != "error":
        config["when_exhausted"] = when
    return config


def _plain(reply: Reply) -> Any:
    """A reply as YAML can write it (a mapping of any kind becomes a dict)."""
    return reply if isinstance(reply, str) else {key: reply[key] for key in reply}


__all__ = ["Reply", "call", "fail", "flow_from_yaml", "scripted"]


def unchecked_flow(
    source: str | Mapping[str, Any], *, path: str | os.PathLike[str] = "<string>"
) -> Flow:
    """The flow ``source`` (YAML text, dedented, or its data) describes, validated by the
    models but not checked: for a test of the engine with tools given in code, which a
    loaded flow would have to declare. ``path`` is the file it says it came from (the
    folder of its relative tool paths)."""
    if isinstance(source, str):
        text = textwrap.dedent(source)
        return _unchecked(yaml.safe_load(text), os.fspath(path), text)
    return _unchecked(source, os.fspath(path))
