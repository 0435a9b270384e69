"""The archive's outbox drained into the store of record: exactly once, ratings posted in the
same transaction, no lost update, and a database outage that only delays."""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import replace
from typing import Any

import pytest

from load_tests.record_games import played_game
from protocol.packer import pack
from server.core.ratings import display_rating
from server.core.room.commands import ArchivedGame
from server.core.room.state import RoomState, Seat, TableOptions
from server.core.rules import Game, Rules
from server.league.archiving import GAME_RECORD, Archiver, game_value, record_of
from server.record.records import GameRecord
from server.record.store import RecordStore
from server.store import Archive, MemoryRoomStore
from server.store.rooms import RoomStore


async def keep_in_room(rooms: RoomStore, record: GameRecord) -> None:
    """Put a finished game in its room's archive as the commit that ends it does."""
    value = record.to_value()
    hands = value.pop("hands")
    records = {GAME_RECORD: pack(value)}
    for hand in hands:
        for kind in ("over", "audit"):
            if hand[kind] is not None:
                records[f"{hand['number']}:{kind}"] = pack(hand[kind])
    await rooms.create_room(record.room_id, b"state", [], None)
    archive = Archive(record.game_id, records)
    assert await rooms.commit(record.room_id, 1, b"state", [], None, archive)


def game_for(rng: random.Random, players: list[str], now: float, room: str) -> GameRecord:
    record, _ = played_game(rng, room, players, now)
    # as the room writes it: no rating columns yet (the archive computes them)
    seats = tuple(replace(s, rating_before=None, rating_after=None) for s in record.seats)
    return replace(record, seats=seats)


def test_a_rooms_archive_reads_back_as_the_game_it_holds() -> None:
    async def run() -> None:
        rooms = MemoryRoomStore()
        record = game_for(random.Random(1), ["a", "b", "c", "d"], 1000.0, "r1")
        await keep_in_room(rooms, record)
        assert record_of(await rooms.archived("r1", record.game_id)) == record

    asyncio.run(run())


async def test_an_unrated_game_is_kept_once_with_every_hand(record_store: RecordStore) -> None:
    rooms = MemoryRoomStore()
    record = replace(game_for(random.Random(2), ["a", "b", "c", "d"], 1000.0, "r2"), rated=False)
    await keep_in_room(rooms, record)
    archiver = Archiver(record_store, rooms)
    assert await archiver.archive("r2", (record.game_id,)) == (ArchivedGame(record.game_id),)
    assert await record_store.game(record.game_id) == record
    assert await archiver.archive("r2", (record.game_id,)) == (ArchivedGame(record.game_id),)
    assert len(await record_store.player_games("a")) == 1
    assert (await record_store.ratings(["a"]))["a"].games == 0  # unrated: nobody's rating moved


async def test_a_rated_game_posts_its_ratings_with_the_game(record_store: RecordStore) -> None:
    rooms = MemoryRoomStore()
    record = game_for(random.Random(3), ["a", "b", "c", "d"], 1000.0, "r3")
    await keep_in_room(rooms, record)
    archiver = Archiver(record_store, rooms)
    (first,) = await archiver.archive("r3", (record.game_id,)) or ()
    assert first.seats is not None and len(first.seats) == 4
    ratings = await record_store.ratings(["a", "b", "c", "d"])
    kept = await record_store.game(record.game_id)
    assert kept is not None
    for seat, shown in zip(kept.seats, first.seats, strict=True):
        assert seat.participant is not None and shown is not None
        mine = ratings[seat.participant]
        assert mine.games == 1 and mine.version == 1
        assert shown["after"]["display"] == display_rating(mine.rating) == seat.rating_after
        assert shown["change"] == shown["after"]["display"] - shown["before"]["display"]
    # a second attempt (a node that died after the transaction) shows the same, posts nothing
    assert await archiver.archive("r3", (record.game_id,)) == (first,)
    assert (await record_store.ratings(["a"]))["a"].version == 1
    assert len(await record_store.rating_history("a")) == 1


async def test_bots_are_anchors_shown_at_a_change_of_zero(record_store: RecordStore) -> None:
    rooms = MemoryRoomStore()
    record = game_for(random.Random(4), ["a", "b", "c", "d"], 1000.0, "r4")
    seats = list(record.seats)
    for i in (1, 2):
        seats[i] = replace(seats[i], participant=None, name="Strong Bot", bot="strong")
    record = replace(record, seats=tuple(seats))
    await keep_in_room(rooms, record)
    (done,) = await Archiver(record_store, rooms).archive("r4", (record.game_id,)) or ()
    assert done.seats is not None
    bot = done.seats[1]
    assert bot is not None and bot["anchor"] and bot["change"] == 0
    assert set((await record_store.ratings(["a", "d"])).keys()) == {"a", "d"}
    assert (await record_store.ratings(["bot:strong"]))["bot:strong"].version == 0  # never written


async def test_two_nodes_archiving_one_game_at_once_keep_it_once(
    record_store: RecordStore,
) -> None:
    rooms = MemoryRoomStore()
    record = game_for(random.Random(5), ["a", "b", "c", "d"], 1000.0, "r5")
    await keep_in_room(rooms, record)
    nodes = [Archiver(record_store, rooms), Archiver(record_store, rooms)]
    results = await asyncio.gather(
        *(nodes[k % 2].archive("r5", (record.game_id,)) for k in range(6))
    )
    assert all(r == results[0] for r in results)  # every node shows the same changes
    assert (await record_store.ratings(["a"]))["a"].version == 1
    assert len(await record_store.rating_history("a")) == 1


async def test_games_sharing_players_lose_no_update(record_store: RecordStore) -> None:
    """Eight games at once over six players: each player's history is one unbroken chain,
    each game's 'before' the previous game's 'after'."""
    rooms = MemoryRoomStore()
    rng = random.Random(6)
    people = ["p0", "p1", "p2", "p3", "p4", "p5"]
    games = []
    for k in range(8):
        players = rng.sample(people, 4)
        record = game_for(rng, players, 1000.0 + k, f"room{k}")
        await keep_in_room(rooms, record)
        games.append(record)
    nodes = [Archiver(record_store, rooms), Archiver(record_store, rooms)]
    done = await asyncio.gather(
        *(nodes[k % 2].archive(g.room_id, (g.game_id,)) for k, g in enumerate(games))
    )
    assert all(d is not None and len(d) == 1 for d in done)
    ratings = await record_store.ratings(people)
    for p in people:
        played = [g for g in games if any(s.participant == p for s in g.seats)]
        assert ratings[p].games == len(played) == ratings[p].version
        # in posting order (the history is in order of the games' finish): 1, 2, … games,
        # so every post read the one before it
        points = sorted(await record_store.rating_history(p, 50), key=lambda pt: pt.games)
        assert [pt.games for pt in points] == list(range(1, len(played) + 1))
        assert points[-1].mu == ratings[p].rating.mu


async def test_a_database_outage_delays_and_is_logged_once(
    tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    rooms = MemoryRoomStore()
    record = game_for(random.Random(7), ["a", "b", "c", "d"], 1000.0, "r7")
    await keep_in_room(rooms, record)
    down = RecordStore.open("postgresql+asyncpg://hearts@127.0.0.1:1/nothing")  # refused
    archiver = Archiver(down, rooms)
    with caplog.at_level(logging.WARNING, logger="server.league.archiving"):
        assert await archiver.archive("r7", (record.game_id,)) is None
        assert await archiver.archive("r7", (record.game_id,)) is None  # not even tried
    assert archiver.outage.failures == 1
    assert [r.message for r in caplog.records].count(
        "the store of record (finished games wait in their rooms) failing; "
        "retrying quietly until it recovers"
    ) == 1
    await down.close()


async def test_a_game_whose_records_are_gone_leaves_the_outbox_with_an_error(
    record_store: RecordStore, caplog: pytest.LogCaptureFixture
) -> None:
    rooms = MemoryRoomStore()
    with caplog.at_level(logging.ERROR, logger="server.league.archiving"):
        done = await Archiver(record_store, rooms).archive("gone", ("gone.1",))
    assert done == (ArchivedGame("gone.1"),)
    assert "cannot be archived" in caplog.text


def finished_room() -> RoomState:
    rules = Rules(50)
    state = RoomState(
        id="room7",
        kind="quick",
        host=None,
        options=TableOptions(rules=rules, rated=True),
        seed=b"\x00" * 32,
        created=1.0,
    )
    state.seats = [
        Seat(name="Ann", player="a", original="a"),
        Seat(name="Bob (bot)", bot="strong", original="b"),  # Bob left; a bot finished it
        Seat(name="East Strong Bot", bot="strong", original="bot:strong"),
        Seat(name="Dee", player="d", original="d"),
    ]
    state.departures = [{"seat": 1, "player": "b", "reason": "booted", "at": 9.0, "hand": 2}]
    state.game = Game(rules)
    state.game.scores = [12, 3, 40, 55]
    state.game_number = 1
    state.status = "finished"
    state.game_started, state.game_finished = 5.0, 77.0
    return state


def test_the_game_record_of_a_finished_room() -> None:
    value = game_value(finished_room())
    assert value["game_id"] == "room7.1" and value["rated"] is True
    assert value["started_at"] == 5.0 and value["finished_at"] == 77.0
    assert [(s["participant"], s["name"], s["bot"]) for s in value["seats"]] == [
        ("a", "Ann", None),
        ("b", "Bob", None),  # the player who left holds the seat, named without " (bot)"
        (None, "East Strong Bot", "strong"),
        ("d", "Dee", None),
    ]
    unrated = finished_room()
    unrated.options = TableOptions(rules=Rules(50), rated=False)
    assert game_value(unrated)["rated"] is False
