"""Accounts in SQL: unique names, password hashes, and deleting an account for good.

Functions on an open connection inside the caller's transaction. The store never sees a
password, only argon2id hashes (``server/accounts/service.py`` makes them). Deleting an account
removes the name, the hash, the rating, its history and the player's push subscriptions
(devices), and turns the player's seats in finished games into "a deleted player"
(``games.forget_player``), so nobody else's record changes; the ladder drops them with the
rating. The player's id is kept, alone, in ``deleted_players``, so a game of theirs that
finishes after the deletion is archived with "a deleted player" in their seat and no rating
under their id (``deleted_among``, which ``store.archive_game`` runs), and it never gets an
account again (``PlayerDeleted``: a guest token it still carries cannot claim one). Sessions
live in the session store and are revoked by the caller (``server/accounts/service.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from .games import forget_player
from .ratings import set_ladder
from .records import MAX_NAME, RecordError, finite, text
from .schema import (
    MAX_HASH,
    accounts,
    deleted_players,
    push_settings,
    push_subscriptions,
    rating_history,
    ratings,
)
from .upsert import insert_or_skip
from .values import Account


class AccountConflict(RecordError):
    """An account could not be created; nothing was written."""


class NameTaken(AccountConflict):
    """Another account holds this name (its confusable skeleton)."""


class AccountExists(AccountConflict):
    """This player id already has an account."""


class PlayerDeleted(AccountConflict):
    """This player id deleted its account: it is never given an account again (a guest token
    it carried cannot claim one, and its later games stay "a deleted player")."""


def check_account(account: Account) -> None:
    text(account.player_id, "account.player_id")
    text(account.name, "account.name", MAX_NAME)
    text(account.name_key, "account.name_key", MAX_NAME)
    text(account.password_hash, "account.password_hash", MAX_HASH)
    finite(account.created_at, "account.created_at")


def _account(row: sa.Row[*tuple[Any, ...]] | None) -> Account | None:
    if row is None:
        return None
    return Account(row.player_id, row.name, row.name_key, row.password_hash, row.created_at)


_COLUMNS = (
    accounts.c.player_id,
    accounts.c.name,
    accounts.c.name_key,
    accounts.c.password_hash,
    accounts.c.created_at,
)


async def insert_account(
    connection: AsyncConnection, account: Account, claimed_guest: bool
) -> None:
    """Create the account, or raise ``NameTaken``/``AccountExists``/``PlayerDeleted``
    writing nothing. A guest's rating goes on the ladder at once if it has played enough."""
    check_account(account)
    if await _was_deleted(connection, account.player_id):
        raise PlayerDeleted(f"player {account.player_id} deleted its account")
    statement = insert_or_skip(connection, accounts).values(
        player_id=account.player_id,
        name=account.name,
        name_key=account.name_key,
        password_hash=account.password_hash,
        created_at=account.created_at,
        claimed_guest=claimed_guest,
    )
    inserted = await connection.execute(statement.returning(accounts.c.player_id))
    if inserted.first() is None:
        if await read_account(connection, account.player_id) is not None:
            raise AccountExists(f"player {account.player_id} already has an account")
        raise NameTaken(f"the name {account.name!r} is taken")
    await set_ladder(connection, account.player_id, on=True)


async def read_account(connection: AsyncConnection, player_id: str) -> Account | None:
    query = sa.select(*_COLUMNS).where(accounts.c.player_id == player_id)
    return _account((await connection.execute(query)).first())


async def account_named(connection: AsyncConnection, name_key: str) -> Account | None:
    query = sa.select(*_COLUMNS).where(accounts.c.name_key == name_key)
    return _account((await connection.execute(query)).first())


async def taken(connection: AsyncConnection, player_id: str, name_key: str | None) -> bool:
    """Whether the player id has or had an account (deleted since), or, given a name key, an
    account holds that name: what a guest token's identity must not be. One statement."""
    held = accounts.c.player_id == player_id
    if name_key is not None:
        held = sa.or_(held, accounts.c.name_key == name_key)
    query = sa.select(
        sa.or_(
            sa.exists().where(held),
            sa.exists().where(deleted_players.c.player_id == player_id),
        )
    )
    return bool(await connection.scalar(query))


async def _was_deleted(connection: AsyncConnection, player_id: str) -> bool:
    query = sa.select(deleted_players.c.player_id).where(deleted_players.c.player_id == player_id)
    return (await connection.execute(query)).first() is not None


async def change_password(connection: AsyncConnection, player_id: str, password_hash: str) -> bool:
    text(password_hash, "password_hash", MAX_HASH)
    changed = await connection.execute(
        sa.update(accounts)
        .where(accounts.c.player_id == player_id)
        .values(password_hash=password_hash)
    )
    return bool(changed.rowcount == 1)


async def remove_account(connection: AsyncConnection, player_id: str) -> bool:
    """Delete the account and everything that names the player (module docstring); False,
    changing nothing, if there is no such account."""
    gone = await connection.execute(
        sa.delete(accounts).where(accounts.c.player_id == player_id).returning(accounts.c.player_id)
    )
    if gone.first() is None:
        return False
    for table in (ratings, rating_history, push_subscriptions, push_settings):
        await connection.execute(sa.delete(table).where(table.c.player_id == player_id))
    tombstone = insert_or_skip(connection, deleted_players, index_elements=["player_id"])
    await connection.execute(tombstone.values(player_id=player_id))
    await forget_player(connection, player_id)
    return True


async def deleted_among(connection: AsyncConnection, player_ids: Iterable[str]) -> set[str]:
    """Which of these players have deleted their account. First locks the accounts of the
    others (shared), so a deletion under way either committed before (its id is read here) or
    waits for the caller's transaction (and then forgets what it wrote, ``forget_player``)."""
    wanted = sorted(set(player_ids))
    if not wanted:
        return set()
    await connection.execute(
        sa.select(accounts.c.player_id)
        .where(accounts.c.player_id.in_(wanted))
        .order_by(accounts.c.player_id)
        .with_for_update(read=True)
    )
    gone = await connection.execute(
        sa.select(deleted_players.c.player_id).where(deleted_players.c.player_id.in_(wanted))
    )
    return {row.player_id for row in gone}
