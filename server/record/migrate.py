"""Bringing a database to the schema this code needs, or checking that it is there.

A node calls ``migrate(url)`` at start (upgrade to the newest revision; a no-op when the
database is current), or ``check(url)`` when told only to check: then a database that is behind
(or ahead: a newer node migrated it) stops the node with ``SchemaMismatch`` instead of running
against tables it does not know. Alembic is configured in code, from the scripts shipped in
``migrations/`` inside the package: no ``alembic.ini`` at run time.

Two nodes starting at once on one PostgreSQL take an advisory lock for the upgrade, so one
migrates and the other then finds the database current; on SQLite the upgrade's
``BEGIN IMMEDIATE`` does the same.
"""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.ext.asyncio import AsyncEngine

from .engine import READ_ONLY, make_engine

SCRIPTS = Path(__file__).with_name("migrations")
LOCK_KEY = 0x4845_4152_5453  # "HEARTS": the advisory lock that serialises upgrades


class SchemaMismatch(RuntimeError):
    """The database is not at the revision this code needs; the message says which way."""


def _config(connection: sa.Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head() -> str:
    """The newest revision this code knows."""
    revision = ScriptDirectory.from_config(_config()).get_current_head()
    assert revision is not None, "the migration scripts are missing"
    return revision


def _current(connection: sa.Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def _upgrade(connection: sa.Connection) -> None:
    command.upgrade(_config(connection), "head")


async def _with_engine(target: str | AsyncEngine) -> tuple[AsyncEngine, bool]:
    if isinstance(target, AsyncEngine):
        return target, False
    return make_engine(target), True


async def migrate(target: str | AsyncEngine) -> str:
    """Upgrade the database at ``target`` (a URL or an engine) to the newest revision, in one
    transaction; returns that revision."""
    engine, owned = await _with_engine(target)
    try:
        async with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                await connection.execute(
                    sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY}
                )
            await connection.run_sync(_upgrade)
            revision = await connection.run_sync(_current)
    finally:
        if owned:
            await engine.dispose()
    assert revision == head()
    return revision


async def check(target: str | AsyncEngine) -> str:
    """The database's revision if it is the newest this code knows; else ``SchemaMismatch``."""
    engine, owned = await _with_engine(target)
    try:
        async with engine.connect() as connection:
            await connection.execution_options(**{READ_ONLY: True})
            current = await connection.run_sync(_current)
    finally:
        if owned:
            await engine.dispose()
    wanted = head()
    if current == wanted:
        return current
    scripts = ScriptDirectory.from_config(_config())
    if current is None:
        raise SchemaMismatch(f"the database has no schema yet; migrate it to {wanted}")
    known = {script.revision for script in scripts.walk_revisions()}
    if current in known:
        raise SchemaMismatch(f"the database is at {current}, behind {wanted}: migrate it")
    raise SchemaMismatch(
        f"the database is at {current}, which this code does not know (a newer version "
        f"migrated it); this node needs {wanted}"
    )
