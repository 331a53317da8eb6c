"""roost's built-in tools, listed by an agent as ``builtin#NAME``.

``read_file``, ``write_file`` and ``list_files`` work inside one root folder,
``http_get`` fetches from the hosts a flow allows, ``shell`` runs a command in
the flow's folder (a person approves each one unless the flow says not to).
Their settings are the flow's ``builtins:`` section. A spec (name, description,
schema) depends only on those settings as written, so a replay, which declares
the tools without building them, offers the model the very same ones.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from roost.messages import ToolSpec
from roost.tools.arguments import argument_problem, schema_validator
from roost.tools.base import Declared, ToolOutcome
from roost.tools.refused import Refused

if TYPE_CHECKING:
    from pathlib import Path

    from roost.flow.models import Builtins


_PATH = "relative to the folder the file tools may use"
PARAMETERS: dict[str, dict[str, Any]] = {
    "read_file": {
        "type": "object",
        "properties": {"path": {"type": "string", "minLength": 1, "description": f"Path {_PATH}."}},
        "required": ["path"],
        "additionalProperties": False,
    },
    "write_file": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": f"Path {_PATH}."},
            "content": {"type": "string", "description": "The text to write."},
            "append": {"type": "boolean", "description": "Add to the end instead of replacing."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    "list_files": {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": f"Folder {_PATH}."},
            "recursive": {"type": "boolean", "description": "List sub-folders' entries too."},
        },
        "additionalProperties": False,
    },
    "http_get": {
        "type": "object",
        "properties": {"url": {"type": "string", "minLength": 1, "description": "An http(s) URL."}},
        "required": ["url"],
        "additionalProperties": False,
    },
    "shell": {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "A /bin/sh command."}
        },
        "required": ["command"],
        "additionalProperties": False,
    },
}
_VALIDATORS = {name: schema_validator(schema) for name, schema in PARAMETERS.items()}
GRACE = 5.0  # seconds the engine waits past a tool's own time limit before it gives up on it


def builtin_description(name: str, settings: Builtins) -> str:
    """What the model is told ``builtin#name`` does, with the limits the flow set."""
    files, http, shell = settings.files, settings.http, settings.shell
    if name == "read_file":
        return f"Read a UTF-8 text file (at most {files.max_bytes} bytes), path {_PATH}."
    if name == "write_file":
        return (
            f"Write a UTF-8 text file (at most {files.max_bytes} bytes), path {_PATH}; "
            "its folders are made if needed; an existing file is replaced unless append is true."
        )
    if name == "list_files":
        return (
            f"List a folder {_PATH} (default: that folder itself), one entry a line, folders "
            f"ending in /; at most {files.max_entries} entries."
        )
    if name == "http_get":
        hosts = ", ".join(http.hosts) or "none"
        return (
            "Fetch a URL with HTTP GET; gives the status, content type and text of the answer. "
            f"Allowed hosts: {hosts}. At most {http.max_bytes} bytes and {http.timeout:g} s."
        )
    approval = " A person approves each command first." if shell.approval == "always" else ""
    return (
        "Run a command with /bin/sh in the flow's folder; gives its output (stdout and stderr, "
        f"at most {shell.max_output} bytes kept) and exit status. Killed after "
        f"{shell.timeout:g} s.{approval}"
    )


def builtin_timeout(name: str, settings: Builtins) -> float:
    """Seconds the engine allows a call: the tool's own limit and a margin to report it."""
    if name == "http_get":
        return settings.http.timeout + GRACE
    if name == "shell":
        return settings.shell.timeout + GRACE
    return 30.0


def builtin_approval(name: str, settings: Builtins) -> bool:
    """True when a person approves each call first: ``shell``, unless the flow says never."""
    return name == "shell" and settings.shell.approval == "always"


def builtin_declared(name: str, wire: str, settings: Builtins) -> Declared:
    """``builtin#name`` as a model is offered it under ``settings``, with nothing run."""
    spec = ToolSpec(
        name=wire, description=builtin_description(name, settings), parameters=PARAMETERS[name]
    )
    approval, timeout = builtin_approval(name, settings), builtin_timeout(name, settings)
    return Declared(spec, approval=approval, timeout=timeout)


class BuiltinTool:
    """One built-in tool as an agent is offered it; build it with the flow's settings."""

    direct_output = False

    def __init__(self, name: str, wire: str, settings: Builtins, folder: Path) -> None:
        self.name = name
        declared = builtin_declared(name, wire, settings)
        self.spec, self.approval, self.timeout = declared.spec, declared.approval, declared.timeout
        self._settings = settings
        self._folder = folder  # the flow's folder, which a relative root starts from

    async def call(self, arguments: dict[str, Any]) -> ToolOutcome:
        """Runs the tool; a bad argument or a refused call is an error result, never a raise."""
        if problem := argument_problem(_VALIDATORS[self.name], arguments):
            return ToolOutcome(f"invalid arguments for {self.spec.name}: {problem}", True)
        try:
            if self.name == "http_get":
                return await self._http_get(arguments["url"])
            if self.name == "shell":
                return await self._shell(arguments["command"])
            return ToolOutcome(await asyncio.to_thread(self._file_call, arguments))
        except Refused as exc:
            return ToolOutcome(str(exc), is_error=True)

    def _file_call(self, arguments: dict[str, Any]) -> str:
        from roost.tools.builtin_files import FileRoot

        root = FileRoot(self._folder / self._settings.files.root, self._settings.files)
        if self.name == "read_file":
            return root.read(arguments["path"])
        if self.name == "write_file":
            return root.write(
                arguments["path"], arguments["content"], append=arguments.get("append", False)
            )
        return root.listing(arguments.get("path", "."), recursive=arguments.get("recursive", False))

    async def _http_get(self, url: str) -> ToolOutcome:
        from roost.tools.builtin_http import http_get

        text, failed = await http_get(url, self._settings.http)
        return ToolOutcome(text, failed)

    async def _shell(self, command: str) -> ToolOutcome:
        from roost.tools.builtin_shell import run_command

        text, failed = await run_command(command, self._folder, self._settings.shell)
        return ToolOutcome(text, failed)
