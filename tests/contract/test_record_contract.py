"""The store of record's contract, on a SQLite file and on a real private PostgreSQL.

Every test runs on both (``record_store`` in tests/conftest.py), through ``RecordStore`` only.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from typing import Any

import pytest
import sqlalchemy as sa

from load_tests.record_games import played_game
from server.record.accounts import AccountExists, NameTaken
from server.record.games import GameCursor
from server.record.records import GameRecord, RatingChange, RecordError
from server.record.schema import game_seats, games, rating_history, ratings
from server.record.store import ArchiveResult, RecordStore
from server.record.values import Account


def small_game(game_id: str, players: list[str | None], finished_at: float) -> GameRecord:
    """A finished game with one short hand: enough for keys, seats and paging."""
    return GameRecord.from_value(
        {
            "game_id": game_id,
            "room_id": f"room-{game_id}",
            "kind": "friends",
            "options": {"target": 100, "rated": False},
            "started_at": finished_at - 600.0,
            "finished_at": finished_at,
            "scores": [26, 0, 0, 0],
            "winners": [1, 2, 3],
            "rated": False,
            "departures": [],
            "seats": [
                {
                    "seat": i,
                    "participant": p,
                    "name": None if p is None else f"Name {p}",
                    "bot": "normal" if p is None else None,
                }
                for i, p in enumerate(players)
            ],
            "hands": [{"number": 1, "over": {"hand": 1, "points": [26, 0, 0, 0]}, "audit": None}],
        }
    )


async def count(store: RecordStore, table: sa.Table) -> int:
    async with store.engine.connect() as connection:
        return int(await connection.scalar(sa.select(sa.func.count()).select_from(table)) or 0)


async def test_a_played_game_of_ten_hands_or_more_round_trips_exactly(
    record_store: RecordStore,
) -> None:
    rng = random.Random(7)
    record, changes = played_game(rng, "roomAAAA", ["pa", "pb", "pc", "pd"], 1.7e9)
    while len(record.hands) < 10:
        record, changes = played_game(rng, "roomAAAA", ["pa", "pb", "pc", "pd"], 1.7e9)
    assert await record_store.archive_game(record, changes) is ArchiveResult.ARCHIVED
    kept = await record_store.game(record.game_id)
    assert kept == record
    assert kept is not None and kept.to_value() == record.to_value()
    assert kept.hands[0].audit is not None and kept.hands[0].audit["audit"]["server_secret"]
    assert await record_store.game("nope") is None
    history = await record_store.rating_history("pa")
    assert [(h.game_id, h.games) for h in history] == [(record.game_id, 1)]
    rated = await record_store.ratings(["pa", "nobody"])
    assert rated["pa"].version == 1 and rated["pa"].games == 1
    assert rated["nobody"].version == 0


async def test_archiving_twice_writes_once(record_store: RecordStore) -> None:
    record = small_game("g1", ["a", "b", "c", None], 100.0)
    assert await record_store.archive_game(record) is ArchiveResult.ARCHIVED
    other = replace(record, scores=(0, 0, 0, 26))  # same id, other content: still a no-op
    assert await record_store.archive_game(other) is ArchiveResult.ALREADY_ARCHIVED
    assert await record_store.game("g1") == record
    assert (await count(record_store, games), await count(record_store, game_seats)) == (1, 4)


async def test_two_nodes_archiving_one_game_at_once_write_it_once(
    record_store: RecordStore, record_url: str
) -> None:
    other_node = RecordStore.open(record_url)
    try:
        rng = random.Random(3)
        record, changes = played_game(rng, "roomBBBB", ["pa", "pb", "pc", "pd"], 1.7e9)
        results = await asyncio.gather(
            *(
                store.archive_game(record, changes)
                for store in (record_store, other_node, record_store, other_node)
            )
        )
        assert sorted(r.value for r in results) == sorted(["archived"] + ["already_archived"] * 3)
        assert await count(record_store, games) == 1
        assert await record_store.game(record.game_id) == record
        assert await count(record_store, rating_history) == 4
        assert (await record_store.ratings(["pa"]))["pa"].version == 1
    finally:
        await other_node.close()


async def test_a_moved_rating_version_refuses_the_whole_game(record_store: RecordStore) -> None:
    record, changes = played_game(random.Random(5), "roomCCCC", ["pa", "pb", "pc", "pd"], 1.7e9)
    stale = [replace(changes[0], version=3), *changes[1:]]
    assert await record_store.archive_game(record, stale) is ArchiveResult.CONFLICT
    assert await record_store.game(record.game_id) is None  # one transaction: nothing kept
    assert await count(record_store, rating_history) == 0
    assert (await record_store.ratings(["pb"]))["pb"].version == 0
    assert await record_store.archive_game(record, changes) is ArchiveResult.ARCHIVED
    # the next game of "pa" must read version 1: an update from version 0 is refused
    second = replace(record, game_id="roomCCCC.2")
    assert await record_store.archive_game(second, changes) is ArchiveResult.CONFLICT
    # two games sharing players, both computed from version 1, race: one lands, one must
    # recompute; neither overwrites the other's update
    read = [replace(c, version=1, games=2) for c in changes]
    third = replace(record, game_id="roomCCCC.3")
    results = await asyncio.gather(
        record_store.archive_game(second, read), record_store.archive_game(third, read)
    )
    assert sorted(r.value for r in results) == ["archived", "conflict"]
    assert (await record_store.ratings(["pa"]))["pa"].version == 2
    assert await count(record_store, games) == 2
    stale_update = replace(read[0], version=1, games=3)
    fourth = replace(record, game_id="roomCCCC.4")
    assert await record_store.archive_game(fourth, [stale_update]) is ArchiveResult.CONFLICT


async def test_keyset_paging_returns_each_of_120_games_once_newest_first(
    record_store: RecordStore,
) -> None:
    for n in range(120):
        # pairs of games share a finish time, so the game id must break the tie
        await record_store.archive_game(small_game(f"g{n:03d}", ["me", f"x{n}", "y", None], n // 2))
    seen: list[str] = []
    cursor: GameCursor | None = None
    while True:
        page = await record_store.player_games("me", before=cursor, limit=17)
        if not page:
            break
        seen.extend(g.game_id for g in page)
        cursor = page[-1].cursor
    assert len(seen) == len(set(seen)) == 120
    assert seen == sorted(seen, key=lambda g: (int(g[1:]) // 2, g), reverse=True)
    assert [g.game_id for g in await record_store.player_games("x5")] == ["g005"]
    with pytest.raises(ValueError):
        await record_store.player_games("me", limit=0)


async def test_two_nodes_racing_for_a_server_key_keep_one(
    record_store: RecordStore, record_url: str
) -> None:
    other_node = RecordStore.open(record_url)
    try:
        values = [bytes([i]) * 32 for i in range(1, 7)]
        stores = [record_store, other_node] * 3
        kept = await asyncio.gather(
            *(s.put_server_key("signing", v, now=1.0) for s, v in zip(stores, values, strict=True))
        )
        assert len(set(kept)) == 1 and kept[0] in values
        assert await record_store.server_key("signing") == kept[0]
        assert await other_node.put_server_key("signing", b"late", now=2.0) == kept[0]
        assert await record_store.server_key("vapid") is None
    finally:
        await other_node.close()


def account(player_id: str, name: str) -> Account:
    return Account(player_id, name, name.lower(), f"$argon2id$hash-of-{player_id}", 10.0)


async def test_accounts_are_unique_by_id_and_name(record_store: RecordStore) -> None:
    await record_store.create_account(account("p1", "Ann"))
    with pytest.raises(NameTaken):
        await record_store.create_account(account("p2", "ANN"))  # same name key
    with pytest.raises(AccountExists):
        await record_store.create_account(account("p1", "Bea"))
    assert await record_store.account("p2") is None
    assert await record_store.account_by_name("bea") is None
    assert await record_store.account_by_name("ann") == account("p1", "Ann")
    assert await record_store.set_password("p1", "$argon2id$new")
    assert not await record_store.set_password("p9", "$argon2id$new")
    kept = await record_store.account("p1")
    assert kept is not None and kept.password_hash == "$argon2id$new"


async def test_deleting_an_account_keeps_everyone_elses_games(record_store: RecordStore) -> None:
    await record_store.create_account(account("gone", "Gone"))
    await record_store.create_account(account("stay", "Stay"))
    record, changes = played_game(random.Random(9), "roomDDDD", ["gone", "stay", "b", "c"], 5e8)
    record = replace(
        record, departures=({"seat": 0, "player": "gone", "reason": "left", "at": 1.0, "hand": 2},)
    )
    assert await record_store.archive_game(record, changes) is ArchiveResult.ARCHIVED
    await record_store.put_server_key("unrelated", b"k", now=1.0)
    assert await record_store.delete_account("gone")
    assert not await record_store.delete_account("gone")
    assert await record_store.account("gone") is None
    assert await record_store.account_by_name("gone") is None
    assert (await record_store.ratings(["gone"]))["gone"].version == 0
    assert await record_store.rating_history("gone") == []
    assert await record_store.player_games("gone") == []
    kept = await record_store.game(record.game_id)
    assert kept is not None
    assert kept.seats[0].participant is None and kept.seats[0].name is None
    assert kept.seats[0].rating_after == record.seats[0].rating_after
    assert kept.seats[1:] == record.seats[1:] and kept.hands == record.hands
    assert kept.departures[0]["player"] is None
    assert [g.game_id for g in await record_store.player_games("stay")] == [record.game_id]
    assert len(await record_store.rating_history("stay")) == 1
    # the name is free again
    await record_store.create_account(account("new", "Gone"))


async def test_a_game_finishing_after_a_player_deleted_their_account_keeps_nothing_of_them(
    record_store: RecordStore,
) -> None:
    await record_store.create_account(account("gone", "Gone"))
    first, first_changes = played_game(random.Random(4), "roomFFFF", ["gone", "x", "y", "z"], 9e8)
    assert await record_store.archive_game(first, first_changes) is ArchiveResult.ARCHIVED
    read = (await record_store.ratings(["gone"]))["gone"]
    assert read.version == 1
    # A game rated from the rating read before the deletion: its post meets a deleted rating
    # row; then a game rated from a read after it (version 0, as a guest's, as a retry does).
    late, late_changes = played_game(random.Random(8), "roomEEEE", ["gone", "b", "c", "d"], 1e9)
    late = replace(
        late, departures=({"seat": 0, "player": "gone", "reason": "left", "at": 1.0, "hand": 1},)
    )
    late_changes = [
        replace(c, version=read.version, games=2) if c.player_id == "gone" else c
        for c in late_changes
    ]
    retry, retry_changes = played_game(random.Random(6), "roomGGGG", ["gone", "e", "f", "g"], 2e9)
    assert await record_store.delete_account("gone")
    for record, changes in ((late, late_changes), (retry, retry_changes)):
        assert await record_store.archive_game(record, changes) is ArchiveResult.ARCHIVED
        kept = await record_store.game(record.game_id)
        assert kept is not None
        assert kept.seats[0].participant is None and kept.seats[0].name is None
        assert kept.seats[1:] == record.seats[1:] and kept.hands == record.hands
        assert all(d["player"] is None for d in kept.departures)
        assert (await record_store.ratings(["gone"]))["gone"].version == 0
        assert await record_store.rating_history("gone") == []
        assert await record_store.player_games("gone") == []
        other = record.seats[1].participant
        assert other is not None and (await record_store.ratings([other]))[other].version == 1
    async with record_store.engine.connect() as connection:
        ids = set(await connection.scalars(sa.select(ratings.c.player_id)))
    assert "gone" not in ids and {"b", "e", "x"} <= ids


async def test_the_ladder_lists_accounts_past_their_provisional_games(
    record_store: RecordStore,
) -> None:
    await record_store.create_account(account("acc", "Acc"))
    for n in range(10):
        players: list[str] = ["acc", "guest", f"o{n}a", f"o{n}b"]
        record = replace(small_game(f"lg{n}", list[str | None](players), 100.0 + n), rated=True)
        got = await record_store.ratings(players)
        changes = [
            RatingChange(
                p,
                got[p].version,
                got[p].rating.mu,
                got[p].rating.sigma,
                got[p].rating.mu + (1.0 if p == "acc" else 0.0),
                got[p].rating.sigma * 0.9,
                got[p].games + 1,
            )
            for p in players
        ]
        assert await record_store.archive_game(record, changes) is ArchiveResult.ARCHIVED
    rows = await record_store.ladder()
    assert [(r.rank, r.player_id, r.name, r.games) for r in rows] == [(1, "acc", "Acc", 10)]
    # the guest (10 games too) claims an account and goes on the ladder at once
    await record_store.create_account(account("guest", "Guest"), claimed_guest=True)
    assert [r.player_id for r in await record_store.ladder()] == ["acc", "guest"]
    await record_store.delete_account("acc")
    assert [r.player_id for r in await record_store.ladder()] == ["guest"]


@pytest.mark.parametrize(
    "spoil",
    [
        lambda v: v.pop("finished_at"),
        lambda v: v["seats"].pop(),
        lambda v: v["seats"][1].update(participant=v["seats"][0]["participant"]),
        lambda v: v["hands"][0].update(number=2),
        lambda v: v["hands"][0]["over"].update(secret=b"bytes are not JSON"),
        lambda v: v.update(started_at=float("nan")),
        lambda v: v.update(game_id="x" * 65),
    ],
)
async def test_a_bad_record_is_refused_with_a_clear_error_and_writes_nothing(
    record_store: RecordStore, spoil: Any
) -> None:
    value = small_game("bad", ["a", "b", "c", None], 10.0).to_value()
    spoil(value)
    with pytest.raises(RecordError) as refused:
        await record_store.archive_game(GameRecord.from_value(value))
    assert "game" in str(refused.value)
    assert await count(record_store, games) == 0


async def test_a_bad_rating_change_writes_nothing(record_store: RecordStore) -> None:
    record = replace(small_game("r1", ["a", "b", "c", None], 10.0), rated=True)
    stranger = RatingChange("zed", 0, 25.0, 8.0, 26.0, 7.0, 1)
    for bad in ([stranger], [replace(stranger, player_id="a", sigma_after=0.0)]):
        with pytest.raises(RecordError):
            await record_store.archive_game(record, bad)
    with pytest.raises(RecordError):  # an unrated game has no rating changes
        await record_store.archive_game(
            replace(record, rated=False), [replace(stranger, player_id="a")]
        )
    assert await count(record_store, games) == 0
    with pytest.raises(ValueError):
        await record_store.put_server_key("k", b"", now=1.0)
