"""An async engine for the store of record, from its URL, and the embedded node's data folder.

Two URLs are accepted, one code path over both:
- ``postgresql+asyncpg://user:password@host:port/database`` for every deployment;
- ``sqlite+aiosqlite:///PATH`` for the embedded single node. Each connection turns on WAL (a
  writer does not block readers), foreign keys (off by default in SQLite), a busy timeout (a
  second writer waits instead of failing at once) and synchronous=FULL (a commit is on disk
  when it returns: the store of record must not lose the last second). Every write transaction
  starts with ``BEGIN IMMEDIATE``, so two writers queue on the busy timeout rather than one
  failing when it upgrades its read lock (which the timeout does not cover).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

SQLITE = "sqlite+aiosqlite"
POSTGRES = "postgresql+asyncpg"
BUSY_TIMEOUT_MS = 10_000
DATA_DIR_VARIABLE = "HEARTS_DATA_DIR"
DATABASE_FILE = "hearts.sqlite3"
READ_ONLY = "hearts_read_only"  # execution option: a SQLite read may start deferred


def default_data_dir() -> Path:
    """Where the embedded node keeps its database: ``$HEARTS_DATA_DIR`` if set, else the
    user's data folder by the XDG rule (``$XDG_DATA_HOME/hearts-live``, by default
    ``~/.local/share/hearts-live``). Not the working directory: a node started from another
    folder, or a fresh clone, must find the same accounts and games."""
    explicit = os.environ.get(DATA_DIR_VARIABLE)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "hearts-live"


def default_url(data_dir: Path | None = None) -> str:
    """The embedded node's SQLite URL (the folder is created if missing)."""
    folder = default_data_dir() if data_dir is None else data_dir
    folder.mkdir(parents=True, exist_ok=True)
    return f"{SQLITE}:///{folder / DATABASE_FILE}"


def _sqlite_connected(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy's BEGIN below, not the driver's implicit one, open transactions.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    for pragma in (
        "journal_mode=WAL",
        "foreign_keys=ON",
        f"busy_timeout={BUSY_TIMEOUT_MS}",
        "synchronous=FULL",
    ):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _sqlite_begin(connection: sa.Connection) -> None:
    read_only = connection.get_execution_options().get(READ_ONLY, False)
    connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def make_engine(url: str, **options: Any) -> AsyncEngine:
    """An engine for ``url`` (see the module docstring); ValueError for any other scheme."""
    parsed = sa.make_url(url)
    if parsed.drivername == SQLITE:
        if parsed.database in (None, "", ":memory:"):
            raise ValueError("the store of record needs a SQLite file, not an in-memory database")
        engine = create_async_engine(parsed, **options)
        event.listen(engine.sync_engine, "connect", _sqlite_connected)
        event.listen(engine.sync_engine, "begin", _sqlite_begin)
        return engine
    if parsed.drivername == POSTGRES:
        return create_async_engine(parsed, pool_pre_ping=True, **options)
    shown = parsed.render_as_string(hide_password=True)
    raise ValueError(f"the store of record takes {SQLITE}:///PATH or {POSTGRES}://…, not {shown}")
