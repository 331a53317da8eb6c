"""Hooks: a flow's own code deciding on tool calls and incoming messages.

A hook is a Python callable (``python: "module:function"``, imported as a
``python:`` tool is, a sync one run in a daemon thread) or a command (run in
the flow's folder with the call as JSON on standard input; what it prints on
standard output is its decision). Either is given ``timeout`` seconds.

The decision is a JSON object: ``{"decision": "allow"}`` (or nothing at all),
``{"decision": "refuse", "reason": "..."}`` or ``{"decision": "change", ...}``
with the new ``arguments`` (before_tool) or ``content`` (after_tool: the
result; before_reply: the message). A hook that times out, raises, exits with
a failure or answers anything else refuses, with one line saying why: a broken
guard never lets a call through, and never stops the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from roost.errors import ToolFailure
from roost.flow.models import CommandHook, PythonHook
from roost.tools.base import raised_text
from roost.tools.loader import load_callable
from roost.tools.python_tool import _in_daemon_thread, _is_async, _Raised

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from roost.flow.models import Hook

Stage = Literal["before_tool", "after_tool", "before_reply"]
DecisionKind = Literal["allow", "refuse", "change"]
QUOTED = 200  # characters of a hook's bad output quoted in the refusal


@dataclass(frozen=True, slots=True)
class Decision:
    """What a hook decided: allow, refuse (with the reason), or change (with the new value)."""

    decision: DecisionKind = "allow"
    reason: str | None = None
    arguments: dict[str, Any] | None = None
    content: str | None = None


class HookFailed(Exception):
    """A hook that did not decide: timed out, raised, exited badly or answered nonsense."""


def hook_name(config: Hook) -> str:
    """How a hook is named in the log and in refusals: its callable or its command line."""
    if isinstance(config, PythonHook):
        return config.python
    return shlex.join([config.command, *config.args])


class FlowHook:
    """One hook of a flow, ready to be asked: ``await hook.decide(stage, call)``."""

    def __init__(self, config: Hook, folder: Path, redact: Callable[[str], str]) -> None:
        self.config = config
        self.name = redact(hook_name(config))
        self._folder = folder
        self._redact = redact
        self._fn: Callable[..., Any] | None = None

    async def decide(self, stage: Stage, call: dict[str, Any]) -> Decision:
        """The hook's decision on ``call``; a hook that fails refuses, saying why in a line."""
        try:
            value = await asyncio.wait_for(self._ask(call), timeout=self.config.timeout)
            return decision_of(stage, value)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            why = f"timed out after {self.config.timeout:g} s"
        except (HookFailed, ToolFailure) as exc:
            why = str(exc)
        except BaseException as exc:  # a hook's sys.exit must not end the run either
            why = raised_text(exc)
        text = " ".join(f"hook {self.name} failed: {why}".split())
        return Decision("refuse", reason=self._redact(text))

    async def _ask(self, call: dict[str, Any]) -> Any:
        if isinstance(self.config, CommandHook):
            return await self._run_command(self.config, call)
        if self._fn is None:
            self._fn = load_callable(self.config.python, self._folder)
        fn = self._fn
        if _is_async(fn):
            return await fn(call)
        try:
            return await _in_daemon_thread(fn, [call], {})
        except _Raised as wrapped:
            raise wrapped.raised from None

    async def _run_command(self, config: CommandHook, call: dict[str, Any]) -> Any:
        try:
            process = await asyncio.create_subprocess_exec(
                config.command,
                *config.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self._folder,
            )
        except OSError as exc:
            raise HookFailed(f"cannot start {config.command!r}: {exc.strerror or exc}") from None
        try:
            out, err = await process.communicate(json.dumps(call).encode())
        except BaseException:  # timed out or cancelled: the command goes too
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            raise
        if process.returncode != 0:
            lines = err.decode(errors="replace").strip().splitlines()
            said = f": {lines[-1][:QUOTED]}" if lines else ""
            raise HookFailed(f"exit status {process.returncode}{said}")
        text = out.decode(errors="replace").strip()
        if not text:
            return None  # printing nothing allows
        try:
            return json.loads(text)
        except ValueError:
            raise HookFailed(f"its output is not JSON: {text[:QUOTED]!r}") from None


_CHANGES = {"before_tool": "arguments", "after_tool": "content", "before_reply": "content"}
_KEYS = frozenset({"decision", "reason", "arguments", "content"})


def decision_of(stage: Stage, value: Any) -> Decision:
    """The Decision a hook's answer states; raises HookFailed for anything else."""
    if value is None:
        return Decision()
    if not isinstance(value, dict):
        raise HookFailed(f"it gave {type(value).__name__}, not an object with a decision")
    unknown = sorted(str(key) for key in value if key not in _KEYS)
    if unknown:
        raise HookFailed(f"unknown key {unknown[0]!r} in its decision")
    kind = value.get("decision", "allow")
    if kind == "allow":
        return Decision()
    if kind == "refuse":
        reason = value.get("reason", "")
        if not isinstance(reason, str):
            raise HookFailed("its reason is not a string")
        return Decision("refuse", reason=reason or "refused by a hook")
    if kind != "change":
        raise HookFailed(f"unknown decision {kind!r}: allow, refuse or change")
    key = _CHANGES[stage]
    new = value.get(key)
    if key == "arguments" and isinstance(new, dict):
        return Decision("change", arguments=new)
    if key == "content" and isinstance(new, str):
        return Decision("change", content=new)
    wanted = "an object" if key == "arguments" else "a string"
    raise HookFailed(f"a change at {stage} needs {key!r}, {wanted}")
