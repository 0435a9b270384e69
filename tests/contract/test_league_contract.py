"""The league store contract: every test runs against the memory and the Redis backend.

A "peer" is a second node on the same league (another Redis connection pool; for the
in-process store, the same store). Tests named ``test_redis_*`` check Redis-only machinery.
The sessions and throttles the league store also holds have their own suite
(``test_sessions_contract.py``).
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING

import pytest
import redis

from matchmaker.matching import QueueEntry
from server.store import open_league_store
from server.store.league import LeagueStore
from server.store.memory.league import MemoryLeagueStore
from server.store.redis.league import RedisLeagueStore

if TYPE_CHECKING:
    from tests.conftest import LeagueFactory


# The quick-play queue -------------------------------------------------------------------------


def entry(pid: str, display: int = 1500, target: int = 50, joined: float = 100.0) -> QueueEntry:
    return QueueEntry(pid, display, target, joined)  # type: ignore[arg-type]


async def test_a_player_is_queued_once_and_rejoining_updates(league: LeagueStore) -> None:
    assert await league.enqueue(entry("a", 1500, 50, 1.0), "Ann")
    assert await league.enqueue(entry("b", 1600, 50, 2.0), "Bob")
    assert await league.enqueue(entry("a", 1510, 100, 3.25), "Ann 2")
    assert await league.queue_entries() == [entry("b", 1600, 50, 2.0), entry("a", 1510, 100, 3.25)]
    assert await league.queue_entries(50) == [entry("b", 1600, 50, 2.0)]
    assert await league.queue_entries(100) == [entry("a", 1510, 100, 3.25)]
    assert await league.queued("a") == entry("a", 1510, 100, 3.25)
    assert await league.queued("zed") is None
    assert await league.queue_names(["a", "b", "zed"]) == {"a": "Ann 2", "b": "Bob"}


async def test_leaving_the_queue(league: LeagueStore) -> None:
    await league.enqueue(entry("a"), "Ann")
    assert await league.dequeue("a")
    assert not await league.dequeue("a")
    assert await league.queue_entries() == []
    assert await league.queue_names(["a"]) == {}
    assert await league.seat_tables([("r1", ["a"])]) == [False]


async def test_entries_not_seen_alive_are_purged(league: LeagueStore) -> None:
    await league.enqueue(entry("a", joined=100.0), "A")  # seen at its join time
    await league.enqueue(entry("b", joined=100.0), "B", now=150.0)
    await league.enqueue(entry("c", joined=100.0), "C")
    await league.enqueue(entry("d", joined=100.0), "D")
    assert await league.touch_queue(["c", "c", "gone"], 160.0) == 1  # only the queued count
    await league.seat_tables([("r1", ["d"])])  # seated players are no longer in the queue
    assert await league.purge_queue(99.0) == []
    assert await league.purge_queue(155.0) == ["a", "b"]
    assert [e.player_id for e in await league.queue_entries()] == ["c"]
    assert await league.queue_names(["a", "b", "c"]) == {"c": "C"}
    assert await league.purge_queue(155.0) == []
    assert await league.dequeue("c")
    assert await league.purge_queue(1e12) == []  # a dequeued entry leaves no trace
    assert await league.touch_queue(["c"], 170.0) == 0
    assert await league.touch_queue([], 170.0) == 0
    # A touched entry is not re-created by the touch once it is gone.
    assert await league.queue_entries() == []


async def test_seat_tables_seats_whole_tables_only(league: LeagueStore) -> None:
    for pid in "abcde":
        await league.enqueue(entry(pid), pid.upper())
    seated = await league.seat_tables(
        [("r1", ["a", "b"]), ("r2", ["c", "gone"]), ("r3", ["a", "d"]), ("r4", ["d"])]
    )
    # r2 has someone not queued; r3 reuses a, already seated at r1 in this very call.
    assert seated == [True, False, False, True]
    assert [e.player_id for e in await league.queue_entries()] == ["c", "e"]
    assert await league.take_assignment("a") == "r1"
    assert await league.take_assignment("a") is None  # read-and-delete
    assert await league.take_assignments(["b", "c", "d", "nobody"]) == {"b": "r1", "d": "r4"}
    assert await league.take_assignments(["b", "d"]) == {}
    assert await league.seat_tables([]) == []
    with pytest.raises(ValueError):
        await league.seat_tables([("r5", ["c", "c"])])


async def test_seat_tables_with_expected_entries_refuses_a_changed_entry(
    league: LeagueStore,
) -> None:
    await league.enqueue(entry("a", target=50, joined=1.0), "A")
    await league.enqueue(entry("b", target=50, joined=1.0), "B")
    decided = {e.player_id: e for e in await league.queue_entries()}
    await league.enqueue(entry("a", target=100, joined=5.0), "A")  # re-queued for 100 meanwhile
    assert await league.seat_tables([("r1", ["a", "b"])], expected=decided) == [False]
    assert len(await league.queue_entries()) == 2
    decided = {e.player_id: e for e in await league.queue_entries()}
    assert await league.seat_tables([("r1", ["a", "b"])], expected=decided) == [True]


async def test_a_player_with_an_untaken_seat_cannot_requeue(league: LeagueStore) -> None:
    await league.enqueue(entry("a"), "A")
    assert await league.seat_tables([("r1", ["a"])]) == [True]
    assert not await league.enqueue(entry("a", joined=200.0), "A")
    assert await league.queue_entries() == []
    assert await league.take_assignment("a") == "r1"
    assert await league.enqueue(entry("a", joined=200.0), "A")


async def test_an_untaken_assignment_expires(league_factory: LeagueFactory) -> None:
    league = league_factory(assignment_ttl=0.2)
    await league.enqueue(entry("a"), "A")
    assert await league.seat_tables([("r1", ["a"])]) == [True]
    await asyncio.sleep(0.3)
    assert await league.take_assignment("a") is None
    assert await league.enqueue(entry("a"), "A")


async def test_pending_tables_are_cleared_by_seating_or_marked_when_stale(
    league: LeagueStore,
) -> None:
    for pid in "abc":
        await league.enqueue(entry(pid), pid)
    await league.note_table("r1", 10.0)
    await league.note_table("r2", 20.0)
    await league.note_table("r3", 30.0)
    await league.note_table("r4", 40.0)
    assert await league.seat_tables([("r1", ["a"]), ("r2", ["gone"])]) == [True, False]
    # r1 was seated: no longer pending. r2 failed: its note stays for the abandoner.
    assert await league.take_stale_tables(25.0) == ["r2"]
    # Marked rooms are returned again until forgotten (the abandoner may have died).
    assert await league.take_stale_tables(35.0) == ["r2", "r3"]
    # A room being abandoned is never seated, even by a slow matchmaker that created it.
    assert await league.seat_tables([("r3", ["b"]), ("r4", ["c"])]) == [False, True]
    assert await league.queued("b") is not None
    await league.forget_table("r2")
    await league.forget_table("r3")
    assert await league.take_stale_tables(1e12) == []


async def test_concurrent_seating_on_two_nodes_never_double_seats(
    league_factory: LeagueFactory,
) -> None:
    league = league_factory()
    stores = [league, league_factory.peer(league)]
    players = [f"p{i}" for i in range(24)]
    for pid in players:
        await league.enqueue(entry(pid), pid)
    rng = random.Random(7)
    calls = []
    tables: dict[str, list[str]] = {}
    for c in range(16):
        batch = []
        for t in range(3):
            room = f"room-{c}-{t}"
            tables[room] = rng.sample(players, 4)
            batch.append((room, tables[room]))
        calls.append(stores[c % 2].seat_tables(batch))
    results = await asyncio.gather(*calls)
    seated_rooms = [
        room
        for c, res in enumerate(results)
        for t, ok in enumerate(res)
        if ok
        for room in [f"room-{c}-{t}"]
    ]
    assigned = await league.take_assignments(players)
    seated_players = [pid for room in seated_rooms for pid in tables[room]]
    assert len(seated_players) == len(set(seated_players))  # nobody at two tables
    assert assigned == {pid: room for room in seated_rooms for pid in tables[room]}
    queued = {e.player_id for e in await league.queue_entries()}
    assert queued == set(players) - set(seated_players)
    assert seated_rooms  # the first table of the first call to run always succeeds


def test_open_league_store_picks_the_backend(redis_url: str) -> None:
    assert isinstance(open_league_store(None), MemoryLeagueStore)
    assert isinstance(open_league_store("memory://"), MemoryLeagueStore)
    store = open_league_store(redis_url, prefix="x")
    assert isinstance(store, RedisLeagueStore) and store.prefix == "x"
    with pytest.raises(ValueError):
        open_league_store("postgres://nope")


# Redis only -------------------------------------------------------------------------------------


async def test_redis_keys_share_the_league_hash_tag(clean_redis: str) -> None:
    league = RedisLeagueStore(clean_redis, prefix="hearts-tag")
    try:
        await league.enqueue(entry("b"), "B")
        await league.enqueue(entry("c"), "C")
        await league.seat_tables([("r1", ["b"])])
        await league.note_table("r2", 1.0)
        await league.create_session("d" * 64, "p1", now=1.0, ttl=100.0)
        await league.create_session("e" * 64, "p1", now=1.0, ttl=100.0)
        assert await league.revoke_session("e" * 64)
        assert await league.hit("login:ann", now=1.0, window=10.0, limit=3) == 0.0
        client = redis.Redis.from_url(clean_redis)
        keys = [k.decode() for k in client.keys("*")]
        client.close()
        # queue, queue:names, queue:seen, assign:b, pending, session:d…, sessions:p1,
        # revoked, throttle:login:ann
        assert len(keys) == 9, keys
        assert all(k.startswith("hearts-tag:{league}:") for k in keys), keys
    finally:
        await league.close()


async def test_redis_scripts_survive_a_flushed_script_cache(clean_redis: str) -> None:
    league = RedisLeagueStore(clean_redis, prefix="hearts-flush")
    try:
        assert await league.enqueue(entry("a"), "A")
        client = redis.Redis.from_url(clean_redis)
        client.script_flush()
        client.close()
        assert await league.seat_tables([("r1", ["a"])]) == [True]
        assert await league.take_assignment("a") == "r1"
    finally:
        await league.close()
