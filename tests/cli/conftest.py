"""The command line's test fixtures: other rooms' fixtures, shared rather than copied.

``roost`` runs the command line in a fresh folder (the store commands' and
``roost memory``'s tests use it); ``pg_url`` is a fresh database on the throwaway
PostgreSQL server, for a command run against a ``postgresql://`` store; ``team``
is a folder with a flow, its tool and its test file, for ``roost test``.
"""

from __future__ import annotations

from tests.flowtest.conftest import team
from tests.store.conftest import pg_server, pg_url, roost

__all__ = ["pg_server", "pg_url", "roost", "team"]
