"""Suite-wide guards: no test may reach a real network address by accident.

The only stand-in in roost's tests is the language model itself, reached on
127.0.0.1 (a fake server speaking the real wire format) or through the
scripted provider. Anything else that tries to open a connection to a
non-loopback address fails loudly here, unless the test is marked ``live``
(and those run only when an API key is set).

Tests that need headless Chromium are marked ``browser`` and those that need
the PostgreSQL server ``postgres``, from the fixtures they use, so that
``python -m pytest -m "not browser and not postgres"`` leaves them out.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from collections.abc import Iterator

# No deadline per example: a deadline is a timed assertion, and a busy machine (CI's
# two cores under xdist) made examples of the property tests exceed one now and then.
settings.register_profile("roost", deadline=None)
settings.load_profile("roost")

# A fixture parametrized with this value asks for the PostgreSQL server when it is set up.
POSTGRES_PARAM = "postgresql"

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


@pytest.fixture(autouse=True)
def _no_user_skills(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test reads the skills of the person running it: their folder is an empty one."""
    folder = tmp_path_factory.getbasetemp() / "user-skills-of-nobody"
    monkeypatch.setenv("ROOST_USER_SKILLS", str(folder))


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """No workers when only named tests run (``pytest tests/x.py::t``): none would pay off.

    Otherwise None, and pytest-xdist's own count applies (the CPUs this process may use,
    or ``PYTEST_XDIST_AUTO_NUM_WORKERS``).
    """
    if config.args and all("::" in arg for arg in config.args):
        return 0
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks ``browser`` and ``postgres`` tests by the fixtures (or parameters) they use."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        callspec = getattr(item, "callspec", None)
        params = callspec.params.values() if callspec is not None else ()
        if "browser" in fixtures:
            item.add_marker(pytest.mark.browser)
        if "pg_server" in fixtures or POSTGRES_PARAM in params:
            item.add_marker(pytest.mark.postgres)
