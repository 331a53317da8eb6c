"""The suite-wide guard refuses non-loopback connections and lets loopback through."""

from __future__ import annotations

import socket
import threading

import pytest


def test_public_address_is_refused() -> None:
    with socket.socket() as sock, pytest.raises(ConnectionRefusedError, match="not loopback"):
        sock.connect(("192.0.2.1", 443))


def test_loopback_is_allowed() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        accepted: list[bool] = []

        def accept() -> None:
            conn, _ = server.accept()
            accepted.append(True)
            conn.close()

        thread = threading.Thread(target=accept)
        thread.start()
        with socket.socket() as client:
            client.connect(("127.0.0.1", port))
        thread.join(timeout=5)
    assert accepted == [True]
