"""Account rows in the store of record (``server/record/accounts.py``), on SQLite and PostgreSQL:
deleting an account takes its devices and its ladder place with it, and its id never gets an
account again; ``taken`` answers for a guest token's identity."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from server.record.accounts import AccountExists, NameTaken, PlayerDeleted
from server.record.records import RatingChange
from server.record.schema import push_subscriptions, ratings
from server.record.store import RecordStore
from server.record.values import Account
from tests.support.game_records import finished_game


def account(player_id: str, name: str) -> Account:
    return Account(player_id, name, name.lower(), f"$argon2id$hash-of-{player_id}", 10.0)


async def add_device(store: RecordStore, endpoint: str, player_id: str) -> None:
    async with store.engine.begin() as connection:
        await connection.execute(
            sa.insert(push_subscriptions).values(
                endpoint=endpoint,
                player_id=player_id,
                keys={"p256dh": "k", "auth": "a"},
                created_at=1.0,
            )
        )


async def devices(store: RecordStore) -> dict[str, str]:
    async with store.engine.connect() as connection:
        rows = await connection.execute(
            sa.select(push_subscriptions.c.endpoint, push_subscriptions.c.player_id)
        )
        return {row.endpoint: row.player_id for row in rows}


async def test_deleting_an_account_deletes_its_devices_only(record_store: RecordStore) -> None:
    await record_store.create_account(account("gone", "Gone"))
    await record_store.create_account(account("stay", "Stay"))
    await add_device(record_store, "https://push.example/gone-phone", "gone")
    await add_device(record_store, "https://push.example/gone-laptop", "gone")
    await add_device(record_store, "https://push.example/stay-phone", "stay")
    assert await record_store.delete_account("gone")
    assert await devices(record_store) == {"https://push.example/stay-phone": "stay"}


async def rate(store: RecordStore, game_id: str, players: list[str], at: float) -> None:
    """One rated game that moves each player's rating a little."""
    record = finished_game(game_id, players, [p.title() for p in players], at=at, rated=True)
    got = await store.ratings(players)
    changes = [
        RatingChange(
            p,
            got[p].version,
            got[p].rating.mu,
            got[p].rating.sigma,
            got[p].rating.mu + 0.5,
            got[p].rating.sigma * 0.9,
            got[p].games + 1,
        )
        for p in players
    ]
    await store.archive_game(record, changes)


async def test_deleting_an_account_takes_it_off_the_ladder(record_store: RecordStore) -> None:
    players = ["gone", "stay", "g_x", "g_y"]
    await record_store.create_account(account("gone", "Gone"))
    await record_store.create_account(account("stay", "Stay"))
    for n in range(10):
        await rate(record_store, f"lad{n}", players, 2000.0 + n)
    assert {row.player_id for row in await record_store.ladder()} == {"gone", "stay"}
    assert await record_store.delete_account("gone")
    assert [row.player_id for row in await record_store.ladder()] == ["stay"]
    async with record_store.engine.connect() as connection:
        left = set(await connection.scalars(sa.select(ratings.c.player_id)))
    assert "gone" not in left and "stay" in left


async def test_a_deleted_id_never_gets_an_account_again(record_store: RecordStore) -> None:
    await record_store.create_account(account("g_claimed", "Claimed"), claimed_guest=True)
    assert await record_store.delete_account("g_claimed")
    with pytest.raises(PlayerDeleted):
        await record_store.create_account(account("g_claimed", "Other"), claimed_guest=True)
    assert await record_store.account_by_name("other") is None
    # The name itself is free: another player takes it.
    await record_store.create_account(account("a_new", "Claimed"))
    with pytest.raises(NameTaken):
        await record_store.create_account(account("a_newer", "CLAIMED"))
    with pytest.raises(AccountExists):
        await record_store.create_account(account("a_new", "Fresh"))


async def test_taken_answers_for_a_guest_tokens_identity(record_store: RecordStore) -> None:
    await record_store.create_account(account("acc", "Ann"))
    await record_store.create_account(account("gone", "Gone"))
    assert await record_store.delete_account("gone")
    assert await record_store.taken("acc")  # an account's id
    assert await record_store.taken("gone")  # deleted: never a guest again
    assert await record_store.taken("g_1", "ann")  # another guest showing an account's name
    assert not await record_store.taken("g_1", "bea")
    assert not await record_store.taken("g_1")
    assert not await record_store.taken("g_1", "gone")  # a deleted account's name is free
