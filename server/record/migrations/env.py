"""Alembic's environment for the store of record (both dialects, async engines).

A node runs the migrations through ``server/record/migrate.py``, which hands over an open
connection in ``config.attributes["connection"]``. The ``alembic`` command (authoring a new
revision: ``alembic -c server/record/migrations/alembic.ini -x url=… revision --autogenerate``)
gets a URL instead and opens its own async engine.
"""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from alembic import context

from server.record.engine import make_engine
from server.record.schema import metadata

config = context.config


def run_on(connection: sa.Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite alters a table by copying it; batch mode lets one revision serve both.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_from_url(url: str) -> None:
    engine = make_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(run_on)
    finally:
        await engine.dispose()


def main() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        run_on(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option(
        "sqlalchemy.url"
    )
    if not url:
        raise SystemExit("give the database: alembic -x url=sqlite+aiosqlite:///PATH …")
    if context.is_offline_mode():
        context.configure(url=url, target_metadata=metadata, literal_binds=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    asyncio.run(run_from_url(url))


main()
