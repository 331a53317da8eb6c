"""Node edits the studio page makes as one step: a rename, a removal, built as JSON Patch ops.

A node (an agent or a channel; one namespace) is named in many places: its key
under ``agents:`` or ``channels:``, channel ``members``, the keys and the
successors of ``transitions`` (plain names and routes' ``to``), and ``start``.
A rename must reach every one of them or the flow stops checking; a removal
takes the node out of the lists that name it (a ``start`` naming it is left,
and comes back as a problem, since no other start can be guessed). The ops are
built here from the flow's JSON form and applied like any other edit, so the
file keeps its comments and only the lines that name the node change.
"""

from __future__ import annotations

import re
from typing import Any

from roost.errors import RoostError

NAME = re.compile(r"^[A-Za-z_][\w.-]{0,127}$")
KINDS = ("agents", "channels")


class NodeError(RoostError):
    """A rename or removal that cannot be made: no such node, a taken or bad name."""


def kind_of(flow: dict[str, Any], name: str) -> str:
    """``agents`` or ``channels``: where the node ``name`` is declared."""
    for kind in KINDS:
        section = flow.get(kind)
        if isinstance(section, dict) and name in section:
            return kind
    raise NodeError(f"no node {name!r} in the flow: neither an agent nor a channel")


def rename_ops(flow: dict[str, Any], old: str, new: str) -> list[dict[str, Any]]:
    """The ops renaming the node ``old`` to ``new`` everywhere the flow names it."""
    kind = kind_of(flow, old)
    if not NAME.match(new):
        raise NodeError(f"{new!r} is not a node name: a letter or _, then letters, digits, _ . -")
    if any(isinstance(flow.get(k), dict) and new in flow[k] for k in KINDS):
        raise NodeError(f"a node {new!r} is in the flow already")
    ops: list[dict[str, Any]] = [{"op": "move", "from": _at(kind, old), "path": _at(kind, new)}]
    for path, channel in _channels(flow, skip=old if kind == "channels" else None):
        ops += _member_renames(path, channel, old, new)
        ops += _transition_renames(path, channel, old, new)
    ops += _start_renames(flow, old, new)
    return ops


def delete_ops(flow: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The ops removing the node ``name`` and its place in members and transitions."""
    kind = kind_of(flow, name)
    ops: list[dict[str, Any]] = []
    for path, channel in _channels(flow, skip=name if kind == "channels" else None):
        ops += _transition_removals(path, channel, name)
        members = channel.get("members")
        if isinstance(members, list):  # from the last: each index holds as the ops apply
            found = [i for i, member in enumerate(members) if member == name]
            ops += [{"op": "remove", "path": f"{path}/members/{i}"} for i in reversed(found)]
    ops.append({"op": "remove", "path": _at(kind, name)})
    return ops


def _channels(flow: dict[str, Any], skip: str | None) -> list[tuple[str, dict[str, Any]]]:
    """Each channel as (its JSON pointer, its mapping), but the one named ``skip``."""
    channels = flow.get("channels")
    if not isinstance(channels, dict):
        return []
    return [
        (_at("channels", name), channel)
        for name, channel in channels.items()
        if isinstance(channel, dict) and name != skip
    ]


def _member_renames(path: str, channel: dict[str, Any], old: str, new: str) -> list[dict[str, Any]]:
    members = channel.get("members")
    if not isinstance(members, list):
        return []
    return [_replace(f"{path}/members/{i}", new) for i, m in enumerate(members) if m == old]


def _transition_renames(
    path: str, channel: dict[str, Any], old: str, new: str
) -> list[dict[str, Any]]:
    transitions = channel.get("transitions")
    if not isinstance(transitions, dict):
        return []
    ops: list[dict[str, Any]] = []
    for speaker, successors in transitions.items():
        where = f"{path}/transitions/{_escape(speaker)}"
        for i, successor in enumerate(successors if isinstance(successors, list) else []):
            if successor == old:
                ops.append(_replace(f"{where}/{i}", new))
            elif isinstance(successor, dict) and successor.get("to") == old:
                ops.append(_replace(f"{where}/{i}/to", new))
    if old in transitions:  # after the successors: their paths name the old key
        ops.append({"op": "move", "from": f"{path}/transitions/{_escape(old)}",
                    "path": f"{path}/transitions/{_escape(new)}"})  # fmt: skip
    return ops


def _transition_removals(path: str, channel: dict[str, Any], name: str) -> list[dict[str, Any]]:
    transitions = channel.get("transitions")
    if not isinstance(transitions, dict):
        return []
    ops: list[dict[str, Any]] = []
    for speaker, successors in transitions.items():
        if speaker == name:
            continue
        where = f"{path}/transitions/{_escape(speaker)}"
        named = [
            i
            for i, s in enumerate(successors if isinstance(successors, list) else [])
            if s == name or (isinstance(s, dict) and s.get("to") == name)
        ]
        ops += [{"op": "remove", "path": f"{where}/{i}"} for i in reversed(named)]
    if name in transitions:
        ops.append({"op": "remove", "path": f"{path}/transitions/{_escape(name)}"})
    return ops


def _start_renames(flow: dict[str, Any], old: str, new: str) -> list[dict[str, Any]]:
    start = flow.get("start")
    if not isinstance(start, dict):
        return []
    return [_replace(f"/start/{key}", new) for key in ("from", "to") if start.get(key) == old]


def _replace(path: str, value: Any) -> dict[str, Any]:
    return {"op": "replace", "path": path, "value": value}


def _at(kind: str, name: str) -> str:
    return f"/{kind}/{_escape(name)}"


def _escape(key: str) -> str:
    """``key`` as one step of a JSON pointer (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")
