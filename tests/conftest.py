"""Suite-wide guards: no test may reach a real network address by accident.

The only stand-in in roost's tests is the language model itself, reached on
127.0.0.1 (a fake server speaking the real wire format) or through the
scripted provider. Anything else that tries to open a connection to a
non-loopback address fails loudly here, unless the test is marked ``live``
(and those run only when an API key is set).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any

import pytest

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_local(address: Any) -> bool:
    if not isinstance(address, tuple):
        return True  # AF_UNIX paths and the like never leave the machine
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name other than localhost would need DNS: not allowed


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _is_local(address):
        raise ConnectionRefusedError(f"tests may not connect to {address!r} (not loopback)")
    _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if not _is_local(address):
        raise ConnectionRefusedError(f"tests may not connect to {address!r} (not loopback)")
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True)
def _no_real_network(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("live"):
        yield
        return
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect = _real_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign]
