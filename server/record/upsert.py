"""``INSERT … ON CONFLICT DO NOTHING`` in the connection's dialect.

Both databases have the clause with the same meaning; SQLAlchemy builds it from each dialect's
own ``insert``. A unique key is the guard, so two writers racing on one natural key (a game id,
a key's name, an account's name) keep exactly one row, whatever their interleaving.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection


def insert_or_skip(connection: AsyncConnection, table: sa.Table, **conflict: Any) -> Any:
    """An insert into ``table`` that skips a row conflicting on a unique key (on
    ``index_elements`` when given, else on any)."""
    name = connection.dialect.name
    if name == "postgresql":
        return postgresql.insert(table).on_conflict_do_nothing(**conflict)
    if name == "sqlite":
        return sqlite.insert(table).on_conflict_do_nothing(**conflict)
    raise ValueError(f"the store of record does not run on {name}")
