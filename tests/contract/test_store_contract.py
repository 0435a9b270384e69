"""The room store contract: every test runs against the memory store, the memory store
journaled in SQLite (the embedded node's), one Redis and a Redis Cluster.

A "peer" is a second node on the same data (another Redis connection pool; for the in-process
stores, the same store). Tests whose names start with ``test_redis_`` check Redis-only machinery
(script cache, retries, reconnects) and run on the private Redis only.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections import Counter
from typing import TYPE_CHECKING

import pytest
import redis
from redis.crc import key_slot

from server.store import (
    Archive,
    MemoryRoomStore,
    RoomStore,
    Snapshot,
    StoredEvent,
    StoreUnavailable,
    Subscriber,
    open_store,
)
from server.store.redis.keys import SHARDS, RoomKeys, shard_of
from server.store.redis.rooms import RedisRoomStore
from server.store.rooms import EventOrderError

if TYPE_CHECKING:
    from tests.conftest import StoreFactory

PREFIX = "hearts-contract"


def ev(seq: int, tag: str = "e") -> StoredEvent:
    return StoredEvent(seq, f"{tag}{seq}".encode() + b"\x00\xff")  # binary-safe payloads


def evs(first: int, last: int, tag: str = "e") -> list[StoredEvent]:
    return [ev(seq, tag) for seq in range(first, last + 1)]


async def next_event(sub: Subscriber, timeout: float = 3.0) -> tuple[str, StoredEvent]:
    return await asyncio.wait_for(anext(sub), timeout)


async def snapshot_all(store: RoomStore, room: str) -> tuple[object, ...]:
    """Everything the store holds about a room, to prove that a call changed nothing."""
    return (
        await store.load_room(room),
        await store.events_since(room, 0),
        await store.next_deadline(room),
    )


# Rooms: create, load, compare-and-set -----------------------------------------------------


async def test_create_then_load(store: RoomStore) -> None:
    assert await store.load_room("r1") is None
    assert await store.create_room("r1", b"s1\x00", evs(1, 2), None)
    assert await store.load_room("r1") == Snapshot(1, b"s1\x00")
    assert await store.events_since("r1", 0) == evs(1, 2)
    assert await store.load_room("r2") is None  # rooms are separate


async def test_create_twice_fails_and_keeps_the_first(store: RoomStore) -> None:
    assert await store.create_room("r1", b"first", evs(1, 1), 100.0)
    before = await snapshot_all(store, "r1")
    assert not await store.create_room("r1", b"second", evs(2, 3), 200.0)
    assert await snapshot_all(store, "r1") == before
    assert before == (Snapshot(1, b"first"), evs(1, 1), 100.0)


async def test_commit_moves_version_by_one(store: RoomStore) -> None:
    await store.create_room("r1", b"v1", [], None)
    assert await store.commit("r1", 1, b"v2", evs(1, 2), None)
    assert await store.load_room("r1") == Snapshot(2, b"v2")
    assert await store.commit("r1", 2, b"v3", evs(3, 3), None)
    assert await store.load_room("r1") == Snapshot(3, b"v3")
    assert await store.events_since("r1", 0) == evs(1, 3)


async def test_stale_commit_changes_nothing_and_publishes_nothing(
    store_factory: StoreFactory,
) -> None:
    store = store_factory()
    peer = store_factory.peer(store)
    await store.create_room("r1", b"v1", evs(1, 1), 50.0)
    assert await store.commit("r1", 1, b"v2", evs(2, 2), 60.0)
    sub = peer.subscriber()
    await sub.add("r1")
    before = await snapshot_all(store, "r1")

    assert not await store.commit("r1", 1, b"stale", [ev(3, "stale")], 999.0)
    assert not await store.commit("r1", 7, b"future", [ev(3, "future")], None)

    assert await snapshot_all(store, "r1") == before
    assert before == (Snapshot(2, b"v2"), evs(1, 2), 60.0)
    assert await store.commit("r1", 2, b"v3", [ev(3, "ok")], None)
    assert await next_event(sub) == ("r1", ev(3, "ok"))  # the stale events never went out
    await sub.close()


async def test_commit_to_a_missing_room_fails(store: RoomStore) -> None:
    assert not await store.commit("ghost", 1, b"x", evs(1, 1), 10.0)
    assert await snapshot_all(store, "ghost") == (None, None, None)


async def test_commit_rejects_version_zero(store: RoomStore) -> None:
    with pytest.raises(ValueError):
        await store.commit("r1", 0, b"x", [], None)
    assert await store.load_room("r1") is None


async def test_concurrent_committers_from_one_version_exactly_one_wins(
    store_factory: StoreFactory,
) -> None:
    store = store_factory()
    peer = store_factory.peer(store)
    await store.create_room("r1", b"v1", evs(1, 1), None)

    async def attempt(i: int) -> bool:
        node = store if i % 2 else peer
        return await node.commit("r1", 1, b"by%d" % i, [ev(2, f"w{i}-"), ev(3, f"w{i}-")], i)

    results = await asyncio.gather(*(attempt(i) for i in range(24)))
    assert results.count(True) == 1
    winner = results.index(True)
    assert await store.load_room("r1") == Snapshot(2, b"by%d" % winner)
    assert await store.events_since("r1", 0) == [
        ev(1),
        ev(2, f"w{winner}-"),
        ev(3, f"w{winner}-"),
    ]
    assert await store.next_deadline("r1") == winner


async def test_compare_and_set_retry_loop_loses_no_update(store_factory: StoreFactory) -> None:
    """Read-modify-write counters from two nodes: every increment lands exactly once."""
    store = store_factory()
    peer = store_factory.peer(store)
    await store.create_room("r1", b"0", [], None)

    async def increment(node: RoomStore) -> None:
        while True:
            snap = await node.load_room("r1")
            assert snap is not None
            count = int(snap.state)
            if await node.commit("r1", snap.version, b"%d" % (count + 1), [], None):
                return

    await asyncio.gather(*(increment(store if i % 2 else peer) for i in range(30)))
    assert await store.load_room("r1") == Snapshot(31, b"30")


async def test_event_seqs_must_increase_and_a_bad_batch_writes_nothing(store: RoomStore) -> None:
    await store.create_room("r1", b"v1", evs(1, 3), 10.0)
    before = await snapshot_all(store, "r1")
    with pytest.raises(EventOrderError):
        await store.commit("r1", 1, b"v2", [ev(3)], 20.0)  # not after the stored seq 3
    with pytest.raises(ValueError):
        await store.commit("r1", 1, b"v2", [ev(5), ev(4)], 20.0)  # not increasing
    with pytest.raises(ValueError):
        await store.create_room("r2", b"v1", [ev(0)], None)  # seqs start at 1
    assert await snapshot_all(store, "r1") == before
    assert await store.load_room("r2") is None
    assert await store.commit("r1", 1, b"v2", [ev(4)], 20.0)


async def test_delete_room(store: RoomStore) -> None:
    await store.create_room("r1", b"v1", evs(1, 2), 10.0)
    await store.create_room("r2", b"v1", evs(1, 1), 10.0)
    assert await store.delete_room("r1")
    assert await snapshot_all(store, "r1") == (None, None, None)
    assert not await store.delete_room("r1")
    assert await store.load_room("r2") == Snapshot(1, b"v1")  # others untouched
    # The id can be reused from scratch, seqs included.
    assert await store.create_room("r1", b"again", evs(1, 1), None)
    assert await store.events_since("r1", 0) == evs(1, 1)


# Event log ---------------------------------------------------------------------------------


async def test_events_since_returns_newer_events_in_order(store: RoomStore) -> None:
    await store.create_room("r1", b"v1", evs(1, 2), None)
    await store.commit("r1", 1, b"v2", evs(3, 5), None)
    await store.commit("r1", 2, b"v3", [], None)  # a commit without events
    await store.commit("r1", 3, b"v4", evs(6, 6), None)
    for after in range(7):
        assert await store.events_since("r1", after) == evs(after + 1, 6)
    assert await store.events_since("r1", 100) == []
    assert await store.events_since("nope", 0) is None


async def test_events_since_with_gaps_between_seqs(store: RoomStore) -> None:
    await store.create_room("r1", b"v1", [ev(10), ev(20)], None)
    await store.commit("r1", 1, b"v2", [ev(35)], None)
    assert await store.events_since("r1", 0) == [ev(10), ev(20), ev(35)]
    assert await store.events_since("r1", 15) == [ev(20), ev(35)]
    assert await store.events_since("r1", 20) == [ev(35)]
    assert await store.events_since("r1", 35) == []


async def test_a_room_without_events_has_an_empty_log(store: RoomStore) -> None:
    await store.create_room("r1", b"v1", [], None)
    assert await store.events_since("r1", 0) == []


async def test_trimmed_log_answers_none_but_keeps_the_newest(store_factory: StoreFactory) -> None:
    store = store_factory(max_log=10)
    await store.create_room("r1", b"v0", [], None)
    # 300 events: enough that Redis's approximate trimming (whole 100-entry nodes) must trim.
    for version in range(1, 31):
        first = (version - 1) * 10 + 1
        assert await store.commit("r1", version, b"v", evs(first, first + 9), None)
    assert await store.events_since("r1", 0) is None
    assert await store.events_since("r1", 150) is None
    assert await store.events_since("r1", 290) == evs(291, 300)
    # Whatever the backend kept, an answer is either None or exactly the events after `after`.
    answered = 0
    for after in range(0, 301):
        got = await store.events_since("r1", after)
        if got is not None:
            assert got == evs(after + 1, 300), after
            answered += 1
    assert 11 <= answered < 301  # at least the newest max_log are kept; the oldest are gone


# Subscriptions -----------------------------------------------------------------------------


async def test_subscriber_gets_events_committed_after_add_from_another_node(
    store_factory: StoreFactory,
) -> None:
    store = store_factory()
    peer = store_factory.peer(store)
    sub = peer.subscriber()
    await store.create_room("r1", b"v1", [ev(1, "before")], None)
    await sub.add("r1")
    assert await store.commit("r1", 1, b"v2", evs(2, 3), None)
    assert await next_event(sub) == ("r1", ev(2))  # not the event committed before add()
    assert await next_event(sub) == ("r1", ev(3))
    await sub.close()


async def test_subscriber_sees_a_room_created_after_add(store_factory: StoreFactory) -> None:
    store = store_factory()
    sub = store_factory.peer(store).subscriber()
    await sub.add("r9")
    assert await store.create_room("r9", b"v1", evs(1, 1), None)
    assert await next_event(sub) == ("r9", ev(1))
    await sub.close()


async def test_subscriber_multiplexes_rooms_and_remove_stops_a_room(
    store_factory: StoreFactory,
) -> None:
    store = store_factory()
    sub = store_factory.peer(store).subscriber()
    for room in ("a", "b", "c"):
        await store.create_room(room, b"v1", [], None)
    await sub.add("a")
    await sub.add("b")
    await sub.add("a")  # adding twice is harmless
    await store.commit("a", 1, b"v2", [ev(1, "a")], None)
    await store.commit("c", 1, b"v2", [ev(1, "c")], None)  # not watched
    await store.commit("b", 1, b"v2", [ev(1, "b")], None)
    assert await next_event(sub) == ("a", ev(1, "a"))
    assert await next_event(sub) == ("b", ev(1, "b"))

    await store.commit("a", 2, b"v3", [ev(2, "a")], None)  # queued, then removed: dropped
    await sub.remove("a")
    await store.commit("a", 3, b"v4", [ev(3, "a")], None)
    await store.commit("b", 2, b"v3", [ev(2, "b")], None)
    assert await next_event(sub) == ("b", ev(2, "b"))
    await sub.close()


async def test_two_subscribers_each_get_every_event(store_factory: StoreFactory) -> None:
    store = store_factory()
    peer = store_factory.peer(store)
    subs = [store.subscriber(), peer.subscriber()]
    await store.create_room("r1", b"v1", [], None)
    for sub in subs:
        await sub.add("r1")
    await store.commit("r1", 1, b"v2", evs(1, 2), None)
    for sub in subs:
        assert [await next_event(sub), await next_event(sub)] == [("r1", ev(1)), ("r1", ev(2))]
        await sub.close()


async def test_closing_a_subscriber_ends_its_iteration(store: RoomStore) -> None:
    sub = store.subscriber()
    await sub.add("r1")
    waiter = asyncio.create_task(anext(sub))
    await asyncio.sleep(0.05)
    await sub.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(waiter, 3)
    assert [item async for item in sub] == []


# Deadlines ---------------------------------------------------------------------------------


async def test_commit_sets_and_clears_the_deadline(store: RoomStore) -> None:
    await store.create_room("r1", b"v1", [], 1000.25)
    assert await store.next_deadline("r1") == 1000.25
    await store.commit("r1", 1, b"v2", [], None)
    assert await store.next_deadline("r1") is None
    assert await store.claim_due(10_000.0, 10, 5.0) == []  # a cleared room is never due
    await store.commit("r1", 2, b"v3", [], 1234.5)
    assert await store.next_deadline("r1") == 1234.5
    assert await store.claim_due(1234.4, 10, 5.0) == []
    assert await store.claim_due(1234.5, 10, 5.0) == ["r1"]  # due at exactly its deadline
    assert await store.next_deadline("r1") == 1239.5  # moved to now + lease


async def test_claim_due_takes_the_earliest_first_up_to_the_limit(store: RoomStore) -> None:
    for i in range(1, 11):
        await store.create_room(f"r{i:02}", b"v1", [], 100.0 + i)
    assert await store.claim_due(105.5, 3, 60.0) == ["r01", "r02", "r03"]
    assert await store.claim_due(105.5, 3, 60.0) == ["r04", "r05"]
    assert await store.claim_due(105.5, 3, 60.0) == []
    assert await store.next_deadline("r06") == 106.0  # not due: untouched
    assert await store.claim_due(105.5, 0, 60.0) == []


async def test_concurrent_claimers_never_get_the_same_room(store_factory: StoreFactory) -> None:
    store = store_factory()
    peer = store_factory.peer(store)
    rooms = {f"room-{i}" for i in range(80)}
    for i, room in enumerate(sorted(rooms)):
        await store.create_room(room, b"v1", [], 50.0 + i / 100)

    async def claimer(node: RoomStore) -> list[str]:
        mine: list[str] = []
        while batch := await node.claim_due(100.0, 7, 30.0):
            mine.extend(batch)
            await asyncio.sleep(0)
        return mine

    results = await asyncio.gather(*(claimer(store if i % 2 else peer) for i in range(6)))
    claimed = [room for batch in results for room in batch]
    assert len(claimed) == len(set(claimed))  # nobody got a room twice
    assert set(claimed) == rooms  # and every due room was taken
    assert all([await store.next_deadline(room) == 130.0 for room in rooms])


async def test_a_claimed_room_comes_due_again_after_its_lease(store: RoomStore) -> None:
    await store.create_room("r1", b"v1", [], 500.0)
    assert await store.claim_due(501.0, 10, 30.0) == ["r1"]
    assert await store.claim_due(530.9, 10, 30.0) == []  # the lease still holds
    assert await store.claim_due(531.0, 10, 30.0) == ["r1"]  # the claimer must have died
    # A commit by the claimer sets the real deadline and ends the lease.
    assert await store.commit("r1", 1, b"v2", [], 600.0)
    assert await store.claim_due(599.0, 10, 30.0) == []
    assert await store.claim_due(600.0, 10, 30.0) == ["r1"]


# Restart support ---------------------------------------------------------------------------


async def test_heartbeat_returns_the_previous_one(store_factory: StoreFactory) -> None:
    store = store_factory()
    peer = store_factory.peer(store)
    assert await store.heartbeat(1000.5) is None
    assert await peer.heartbeat(1002.0) == 1000.5  # shared by all nodes
    assert await store.heartbeat(1004.0) == 1002.0


async def test_shift_deadlines_moves_every_pending_deadline(store: RoomStore) -> None:
    await store.create_room("a", b"v1", [], 100.0)
    await store.create_room("b", b"v1", [], 250.5)
    await store.create_room("c", b"v1", [], None)
    assert await store.shift_deadlines(60.0) == 2
    assert await store.next_deadline("a") == pytest.approx(160.0)
    assert await store.next_deadline("b") == pytest.approx(310.5)
    assert await store.next_deadline("c") is None
    assert await store.claim_due(159.0, 10, 5.0) == []  # the shifted time is what counts
    assert await store.claim_due(160.0, 10, 5.0) == ["a"]


# Leases ------------------------------------------------------------------------------------


async def test_a_lease_is_exclusive_renewable_and_releasable(store_factory: StoreFactory) -> None:
    store = store_factory()
    peer = store_factory.peer(store)
    assert await store.acquire_lease("matchmaker", "node-a", 0.5)
    assert not await peer.acquire_lease("matchmaker", "node-b", 0.5)
    assert await peer.acquire_lease("other", "node-b", 0.5)  # leases are separate
    await asyncio.sleep(0.3)
    assert await store.acquire_lease("matchmaker", "node-a", 0.5)  # renewed to 0.8 s from start
    await asyncio.sleep(0.3)  # 0.6 s after the first acquisition: expired unless renewed
    assert not await peer.acquire_lease("matchmaker", "node-b", 0.5)
    assert not await peer.release_lease("matchmaker", "node-b")  # not the holder
    assert not await peer.acquire_lease("matchmaker", "node-b", 0.5)
    assert await store.release_lease("matchmaker", "node-a")
    assert not await store.release_lease("matchmaker", "node-a")  # already released
    assert await peer.acquire_lease("matchmaker", "node-b", 0.5)


async def test_a_lease_expires(store_factory: StoreFactory) -> None:
    store = store_factory()
    peer = store_factory.peer(store)
    assert await store.acquire_lease("scheduler", "node-a", 0.3)
    assert not await peer.acquire_lease("scheduler", "node-b", 5.0)
    await asyncio.sleep(0.5)
    assert await peer.acquire_lease("scheduler", "node-b", 5.0)
    assert not await store.release_lease("scheduler", "node-a")  # it lost the lease
    assert not await store.acquire_lease("scheduler", "node-a", 5.0)


# Clock and health --------------------------------------------------------------------------


async def test_now_is_the_wall_clock_and_does_not_go_back(store: RoomStore) -> None:
    first = await store.now()
    assert abs(first - time.time()) < 2.0  # both run on this machine
    await asyncio.sleep(0.02)
    second = await store.now()
    assert first < second < first + 2.0


async def test_ping(store: RoomStore) -> None:
    assert await store.ping()


# Archives, time to live, node presence ------------------------------------------------------


async def test_a_commit_writes_its_archive_records_with_it(store: RoomStore) -> None:
    await store.create_room("r1", b"v1", [], None)
    assert await store.archived("r1", "g1") == {}
    assert await store.commit("r1", 1, b"v2", evs(1, 1), None, Archive("g1", {"1:over": b"\x00a"}))
    assert await store.commit("r1", 2, b"v3", [], None, Archive("g1", {"2:over": b"b"}))
    assert await store.archived("r1", "g1") == {"1:over": b"\x00a", "2:over": b"b"}
    assert await store.archived_record("r1", "g1", "2:over") == b"b"
    assert await store.archived_record("r1", "g1", "3:over") is None
    assert await store.archived("r1", "g2") == {}
    # A conflicting commit writes no record either.
    assert not await store.commit("r1", 1, b"vx", [], None, Archive("g1", {"9:over": b"x"}))
    assert await store.archived_record("r1", "g1", "9:over") is None


async def test_a_room_with_a_time_to_live_expires_and_one_without_does_not(
    store: RoomStore,
) -> None:
    await store.create_room("short", b"v1", [], None)
    await store.create_room("kept", b"v1", [], None)
    assert await store.commit("short", 1, b"v2", evs(1, 1), None, Archive("g", {"a": b"1"}), 0.2)
    assert await store.commit("kept", 1, b"v2", evs(1, 1), None, None, 0.2)
    assert await store.commit("kept", 2, b"v3", [], None, None, None)  # back in play: no expiry
    await asyncio.sleep(0.4)
    assert await store.load_room("short") is None
    assert await store.events_since("short", 0) is None
    assert await store.archived("short", "g") == {}
    assert await store.load_room("kept") == Snapshot(3, b"v3")
    assert await store.create_room("short", b"new", [], None)  # the code is free again


async def test_a_lapsed_node_is_reaped_once_with_its_rooms(store_factory: StoreFactory) -> None:
    a, b = store_factory(), store_factory()
    # n1 lapses after 1 s: long enough for the calls below on a loaded machine's cluster.
    assert not await a.node_alive("n1", 1.0)  # first time: it was not alive before
    assert await a.node_alive("n1", 1.0)
    await a.node_alive("n2", 10.0)
    await a.track_room("n1", "r1")
    await a.track_room("n1", "r2")
    await a.untrack_room("n1", "r2")
    await a.track_room("n2", "r3")
    assert await b.reap_nodes() == []
    await asyncio.sleep(1.2)
    reaped = await asyncio.gather(a.reap_nodes(), b.reap_nodes())
    assert sorted(reaped, key=len) == [[], [("n1", ["r1"])]]  # one caller takes it
    assert await a.reap_nodes() == []
    assert not await a.node_alive("n1", 1.0)  # it can tell it was reaped


def test_open_store_picks_the_backend(redis_url: str) -> None:
    assert isinstance(open_store(None), MemoryRoomStore)
    assert isinstance(open_store(""), MemoryRoomStore)
    assert isinstance(open_store(redis_url), RedisRoomStore)
    with pytest.raises(ValueError):
        open_store("postgres://localhost/x")


# Redis only --------------------------------------------------------------------------------


@pytest.fixture
def redis_store(clean_redis: str) -> RedisRoomStore:
    return RedisRoomStore(clean_redis, prefix=PREFIX)


async def test_redis_keys_of_a_room_share_its_deadline_shards_slot(
    redis_store: RedisRoomStore, clean_redis: str
) -> None:
    await redis_store.create_room("r1", b"v1", evs(1, 1), 10.0)
    client = redis.Redis.from_url(clean_redis)
    try:
        keys = sorted(client.keys("*"))
    finally:
        client.close()
    tag = f"{PREFIX}:{{s{shard_of('r1')}}}"
    assert keys == [
        f"{tag}:deadlines".encode(),
        f"{tag}:room:r1:log".encode(),
        f"{tag}:room:r1:state".encode(),
    ]
    # One slot for everything the commit script touches, its channel included.
    slots = {key_slot(k) for k in keys} | {key_slot(redis_store.channel("r1").encode())}
    assert len(slots) == 1
    await redis_store.close()


async def test_redis_commits_in_play_leave_the_keys_lasting_without_a_persist_each(
    redis_store: RedisRoomStore, clean_redis: str
) -> None:
    client = redis.Redis.from_url(clean_redis)

    def persists() -> int:
        return int(client.info("commandstats").get("cmdstat_persist", {}).get("calls", 0))

    names = RoomKeys(PREFIX)
    keys = [names.room("r1", part) for part in ("state", "log", "archive:g", "nodes")]
    try:
        await redis_store.create_room("r1", b"v1", evs(1, 1), None)
        await redis_store.watch_room("n1", "r1")
        before = persists()
        for v in range(1, 6):  # cards in play
            assert await redis_store.commit("r1", v, b"s", evs(v + 1, v + 1), None)
        assert persists() == before
        # The hand ends the game: every key expires; a rematch puts them back in play.
        last_hand = Archive("g", {"a": b"1"})
        assert await redis_store.commit("r1", 6, b"s", evs(7, 7), None, last_hand, 60)
        assert all(client.pttl(k) > 0 for k in keys)
        assert await redis_store.commit("r1", 7, b"s", evs(8, 8), None, Archive("g", {"b": b"2"}))
        assert [client.pttl(k) for k in keys] == [-1, -1, -1, -1]
        assert client.hget(keys[0], "x") == b"0"
        after = persists()
        assert await redis_store.commit("r1", 8, b"s", evs(9, 9), None)
        assert persists() == after
        # A room stored before x was kept, expiring, is made lasting by its next commit.
        client.hdel(keys[0], "x")
        client.pexpire(keys[1], 60_000)
        assert await redis_store.commit("r1", 9, b"s", evs(10, 10), None)
        assert client.pttl(keys[1]) == -1 and client.hget(keys[0], "x") == b"0"
    finally:
        client.close()
        await redis_store.close()


def test_a_rooms_cached_commit_keys_are_its_key_names() -> None:
    keys = RoomKeys(PREFIX)
    names = keys.commit_keys("r1")
    assert names == (
        shard_of("r1"),
        keys.room("r1", "state"),
        keys.room("r1", "log"),
        keys.deadlines(shard_of("r1")),
        keys.room("r1", "archive:-"),
        keys.room("r1", "nodes"),
        keys.channel("r1"),
    )
    assert keys.commit_keys("r1") is names
    assert RoomKeys("other").commit_keys("r1").state == RoomKeys("other").room("r1", "state")


def test_rooms_spread_over_every_shard() -> None:
    counts = Counter(shard_of(f"room-{i}") for i in range(SHARDS * 50))
    assert len(counts) == SHARDS
    assert max(counts.values()) < 2 * min(counts.values())
    assert shard_of("ABCD") == shard_of("ABCD")  # stable: CRC-32, not Python's salted hash


async def test_claims_across_shards_take_the_earliest_first(store: RoomStore) -> None:
    rooms = [f"x{i}" for i in range(40)]  # spread over many shards
    for i, room in enumerate(rooms):
        await store.create_room(room, b"s", [], 100.0 + i)
    assert await store.claim_due(120.0, 5, 30.0) == rooms[:5]
    assert await store.claim_due(120.0, 100, 30.0) == rooms[5:21]
    assert await store.claim_due(120.0, 100, 30.0) == []
    assert await store.next_deadline(rooms[0]) == 150.0


async def test_redis_commit_survives_a_flushed_script_cache(
    redis_store: RedisRoomStore, clean_redis: str
) -> None:
    await redis_store.create_room("r1", b"v1", [], None)
    client = redis.Redis.from_url(clean_redis)
    try:
        client.script_flush()  # what a Redis restart or failover does: EVALSHA gets NOSCRIPT
    finally:
        client.close()
    assert await redis_store.commit("r1", 1, b"v2", evs(1, 1), None)
    assert await redis_store.load_room("r1") == Snapshot(2, b"v2")
    await redis_store.close()


async def test_redis_a_retried_commit_reports_its_success_once(
    redis_store: RedisRoomStore,
) -> None:
    """redis-py resends a command whose reply was lost; the nonce makes that harmless."""
    await redis_store.create_room("r1", b"v1", [], None)
    sub = redis_store.subscriber()
    await sub.add("r1")
    assert await redis_store._commit("r1", 1, b"v2", evs(1, 1), None, b"nonce-1")
    assert await redis_store._commit("r1", 1, b"v2", evs(1, 1), None, b"nonce-1")  # the resend
    assert not await redis_store._commit("r1", 1, b"v2", evs(1, 1), None, b"nonce-2")
    assert await redis_store.load_room("r1") == Snapshot(2, b"v2")
    assert await redis_store.events_since("r1", 0) == evs(1, 1)
    await redis_store.commit("r1", 2, b"v3", evs(2, 2), None)
    assert await next_event(sub) == ("r1", ev(1))
    assert await next_event(sub) == ("r1", ev(2))  # published once, not twice
    await redis_store.close()


async def test_redis_heartbeat_resend_returns_the_same_answer(
    redis_store: RedisRoomStore,
) -> None:
    await redis_store.heartbeat(100.0)
    script, key = redis_store._heartbeat_script, [redis_store._heartbeat_key]
    assert float(await script(keys=key, args=["200.0", b"n1"])) == 100.0
    assert float(await script(keys=key, args=["200.0", b"n1"])) == 100.0  # not 200.0
    assert await redis_store.heartbeat(300.0) == 200.0
    await redis_store.close()


async def test_redis_subscriber_backfills_what_a_reconnect_missed(
    redis_store: RedisRoomStore, clean_redis: str
) -> None:
    peer = RedisRoomStore(clean_redis, prefix=PREFIX)
    sub = peer.subscriber()
    await redis_store.create_room("r1", b"v0", [], None)
    await redis_store.create_room("r2", b"v0", [], None)
    await sub.add("r1")
    await sub.add("r2")
    await redis_store.commit("r1", 1, b"v1", evs(1, 1), None)
    assert await next_event(sub) == ("r1", ev(1))

    admin = redis.Redis.from_url(clean_redis)
    try:
        assert admin.client_kill_filter(_type="pubsub") >= 1
    finally:
        admin.close()
    # Committed while the subscriber is disconnected or re-subscribing.
    await redis_store.commit("r1", 2, b"v2", evs(2, 3), None)
    await redis_store.commit("r2", 1, b"v1", evs(1, 1, "r2-"), None)
    received = [await next_event(sub) for _ in range(3)]
    assert [item for item in received if item[0] == "r1"] == [("r1", ev(2)), ("r1", ev(3))]
    assert [item for item in received if item[0] == "r2"] == [("r2", ev(1, "r2-"))]
    # And live delivery works again, without duplicates.
    await redis_store.commit("r1", 3, b"v3", evs(4, 4), None)
    assert await next_event(sub) == ("r1", ev(4))
    await sub.close()
    await peer.close()
    await redis_store.close()


async def test_redis_unreachable_store_raises_store_unavailable() -> None:
    with socket.socket() as sock:  # a port nobody listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        store = RedisRoomStore(f"redis://127.0.0.1:{port}/0", prefix=PREFIX)
        assert not await store.ping()
        with pytest.raises(StoreUnavailable):
            await store.load_room("r1")
        await store.close()


async def test_an_outage_is_recorded_for_every_node(store_factory: StoreFactory) -> None:
    store = store_factory()
    assert await store.last_outage() is None
    await store.record_outage(1000.5, 42.25)
    assert await store_factory.peer(store).last_outage() == (1000.5, 42.25)
    await store.record_outage(2000.0, 3.0)
    assert await store.last_outage() == (2000.0, 3.0)
