"""Where the run store is: its URL, found or given, and how messages show it.

Without ``--db`` or ``ROOST_DB`` the store is ``.roost/roost.db`` in the nearest
folder from the current one up that has a ``.roost`` folder. A URL is shown
with its password and the values of its secret-like query parameters masked,
also when SQLAlchemy cannot parse it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from roost.errors import UsageError
from roost.flow.redact import Redactor

DEFAULT_PATH = Path(".roost") / "roost.db"
# Query parameters whose values are shown as *** (password=, sslpassword=, api_key=, token=...).
_SECRET_WORDS = "pass|pwd|secret|token|key|auth|credential"
_SECRET_PARAM = re.compile(_SECRET_WORDS, re.IGNORECASE)
# The same in a URL SQLAlchemy cannot parse, and its password (as SQLAlchemy would read it).
_SECRET_QUERY_TEXT = re.compile(rf"([?&][^=&]*(?:{_SECRET_WORDS})[^=&]*=)[^&]*", re.IGNORECASE)
# Everything from the user name's ':' to the LAST '@': a password may hold an unencoded '@'.
_PASSWORD_TEXT = re.compile(r"^([\w+]*://[^:/]*:).*@")
_HIDDEN = "ROOSTHIDDEN"  # rendered as is in a URL, then shown as ***


def resolve_url(db: str | None = None) -> str:
    """The database URL: ``db``, else ``ROOST_DB``, else the nearest ``.roost/roost.db``.

    A value without ``://`` is taken as the path of a SQLite file. The file's
    folder is made when the store is created, not here: looking for a stored run
    must leave no empty ``.roost`` folder behind.
    """
    value = db or os.environ.get("ROOST_DB") or ""
    if not value:
        return f"sqlite:///{default_path()}"
    if "://" not in value:
        return f"sqlite:///{value}"
    if value.startswith(("postgresql://", "postgres://")):
        # psycopg (3) is the driver roost installs; SQLAlchemy's default would be psycopg2.
        return "postgresql+psycopg://" + value.split("://", 1)[1]
    return value


def default_path() -> Path:
    """``.roost/roost.db`` in the nearest folder, from the current one up, that has a
    ``.roost`` folder (as git finds ``.git``); in the current folder when none has.

    Runs started in a subfolder of a project are then kept with the project's
    runs. The path is relative when the folder is the current one, else absolute.
    """
    try:
        here = Path.cwd()
    except OSError:  # the current folder was deleted: only a relative path can be named
        return DEFAULT_PATH
    for folder in (here, *here.parents):
        try:
            if (folder / DEFAULT_PATH.parent).is_dir():
                return DEFAULT_PATH if folder == here else folder / DEFAULT_PATH
        except OSError:  # a folder above that cannot be looked into ends the search
            break
    return DEFAULT_PATH


def shown_store(db: str | None = None) -> str:
    """Where the store named by ``db`` (or the default) is, as messages show it.

    A SQLite file's path, or the database URL with its secrets masked.
    """
    url = resolve_url(db)
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///") or ":memory:"
    return shown_url(url)[0]


def shown_url(url: str) -> tuple[str, Redactor]:
    """The URL as messages show it, and a Redactor of the secrets in it.

    The password and the values of secret-like query parameters (``password=``,
    ``token=``...) are shown as ``***``; a URL that cannot be parsed is a UsageError.
    """
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as exc:
        reason = "its port is not a number" if isinstance(exc, ValueError) else "cannot parse it"
        raise UsageError(f"invalid database URL {_masked_text(url)!r}: {reason}") from None
    if "@" in (parsed.host or ""):
        # SQLAlchemy ends the password at its first '@' and takes the rest for the host,
        # which a driver's error would then print: refuse before connecting.
        raise UsageError(
            f"invalid database URL {_masked_text(url)!r}: write an '@' in its password as %40"
        )
    secrets = [parsed.password] if isinstance(parsed.password, str) else []
    query: dict[str, str | tuple[str, ...]] = {}
    for key, value in parsed.query.items():
        if _SECRET_PARAM.search(key):
            values = (value,) if isinstance(value, str) else tuple(value)
            secrets.extend(values)
            query[key] = tuple(_HIDDEN for _ in values) if len(values) > 1 else _HIDDEN
    if query:
        parsed = parsed.update_query_dict(query)
    shown = parsed.render_as_string(hide_password=True).replace(_HIDDEN, "***")
    return shown, Redactor(secrets)


def masked_db(url: str) -> str:
    """A database URL or path as it may be printed (in a hint to type again): secrets masked."""
    return _masked_text(url)


def _masked_text(url: str) -> str:
    """A URL that SQLAlchemy cannot parse, with what looks like secrets in it masked."""
    return _SECRET_QUERY_TEXT.sub(r"\1***", _PASSWORD_TEXT.sub(r"\1***@", url, count=1))
