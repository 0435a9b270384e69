"""Migrations: an empty database to the newest schema on both, the check that refuses to run on
one that is behind or ahead, and the first revision matching ``schema.py`` exactly."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from server.record.engine import make_engine
from server.record.migrate import SchemaMismatch, check, head, migrate
from server.record.schema import metadata


async def test_an_empty_database_migrates_to_head_and_then_passes_the_check(
    record_url: str,
) -> None:
    with pytest.raises(SchemaMismatch, match="no schema"):
        await check(record_url)
    assert await migrate(record_url) == head()
    assert await migrate(record_url) == head()  # a second start: nothing to do
    assert await check(record_url) == head()
    engine = make_engine(record_url)
    try:
        async with engine.connect() as connection:
            tables = await connection.run_sync(lambda c: set(sa.inspect(c).get_table_names()))
            diff = await connection.run_sync(
                lambda c: compare_metadata(MigrationContext.configure(c), metadata)
            )
        assert set(metadata.tables) <= tables
        assert diff == [], "schema.py and the migrations differ: add a revision"
    finally:
        await engine.dispose()


async def test_the_check_refuses_a_database_ahead_of_this_code(record_url: str) -> None:
    await migrate(record_url)
    engine = make_engine(record_url)
    try:
        async with engine.begin() as connection:
            await connection.execute(sa.text("UPDATE alembic_version SET version_num = 'f00d'"))
    finally:
        await engine.dispose()
    with pytest.raises(SchemaMismatch, match="does not know"):
        await check(record_url)


async def test_two_nodes_migrating_at_once_both_start(record_url: str) -> None:
    import asyncio

    assert await asyncio.gather(migrate(record_url), migrate(record_url)) == [head(), head()]
