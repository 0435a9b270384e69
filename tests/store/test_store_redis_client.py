"""The Redis client's cost per command, on one Redis and on a Redis Cluster: group commit
(``server.store.redis.client.batching``: commits of one loop turn share a round trip, each keeping
its own answer) and commands packed by hiredis (``server.store.redis.client.packing``)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import hiredis
import pytest
import redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError, SlotNotCoveredError

from server.store import Snapshot, StoredEvent, StoreError, StoreUnavailable
from server.store.redis.client.batching import LoadGauge
from server.store.redis.client.connect import REPLY_TIMEOUT, store_errors
from server.store.redis.client.lane import RETRY_AFTER, Lane
from server.store.redis.client.packing import PackedConnection
from server.store.redis.deadlines import ShardedDeadlines
from server.store.redis.rooms import RedisRoomStore
from tests.conftest import _start_redis

if TYPE_CHECKING:
    from tests.conftest import StoreFactory


def ev(seq: int) -> StoredEvent:
    return StoredEvent(seq, b"e%d" % seq)


def redis_only(store_factory: StoreFactory) -> RedisRoomStore:
    store = store_factory()
    if not isinstance(store, RedisRoomStore):
        pytest.skip("group commit is the Redis store's")
    return store


def store_nodes(store: RedisRoomStore, single_url: str) -> list[redis.Redis]:
    """A plain client to each server the store writes to: its Redis, or each primary."""
    client = store._client
    if isinstance(client, RedisCluster):
        return [redis.Redis(host=n.host, port=n.port) for n in client.get_primaries()]
    return [redis.Redis.from_url(single_url)]


def one_redis(store_factory: StoreFactory, why: str) -> RedisRoomStore:
    store = redis_only(store_factory)
    if store.cluster:
        pytest.skip(f"one Redis: {why}")
    return store


async def assert_stored(store: RedisRoomStore, rooms: list[str], refused: set[int]) -> None:
    """Room i holds its "v2-i" commit, or still its "v1" where that commit was refused."""
    for i, room in enumerate(rooms):
        expected = Snapshot(1, b"v1") if i in refused else Snapshot(2, b"v2-%d" % i)
        assert await store.load_room(room) == expected


async def test_commits_of_one_turn_share_a_round_trip_and_keep_their_answers(
    store_factory: StoreFactory,
) -> None:
    rooms = [f"g{i}" for i in range(30)]  # over many shards (and cluster nodes)
    store = await laned_store(store_factory, rooms)
    batcher = store._commits
    assert batcher.lanes is not None
    servers = {batcher.lanes.ready(store._room_key(room, "state")) for room in rooms}
    before = batcher.round_trips

    async def commit(i: int, room: str) -> bool | str:
        version = 7 if i == 3 else 1  # room 3's is stale: a conflict, refused without an error
        events = [ev(1)] if i == 5 else [ev(2)]  # room 5's seq is not after its stored 1
        try:
            return await store.commit(room, version, b"v2-%d" % i, events, None)
        except ValueError:
            return "bad seq"

    results = await asyncio.gather(*(commit(i, room) for i, room in enumerate(rooms)))
    assert results[3] is False
    assert results[5] == "bad seq"
    assert all(r is True for i, r in enumerate(results) if i not in (3, 5))
    # Thirty commits, one pipeline to each server (one Redis, or each primary of a cluster).
    assert batcher.round_trips - before == len(servers)
    await assert_stored(store, rooms, {3, 5})
    await store.close()


async def test_a_batch_survives_a_flushed_script_cache(
    store_factory: StoreFactory, clean_redis: str
) -> None:
    store = one_redis(store_factory, "its script cache is flushed here")
    rooms = [f"f{i}" for i in range(10)]
    for room in rooms:
        await store.create_room(room, b"v1", [], None)
    client = redis.Redis.from_url(clean_redis)
    try:
        client.script_flush()  # a restart or failover: every EVALSHA of the batch gets NOSCRIPT
    finally:
        client.close()
    results = await asyncio.gather(*(store.commit(r, 1, b"v2", [ev(1)], None) for r in rooms))
    assert results == [True] * len(rooms)
    for room in rooms:
        assert await store.load_room(room) == Snapshot(2, b"v2")
    await store.close()


async def test_on_a_lane_an_empty_script_cache_is_refilled_on_the_lane(
    store_factory: StoreFactory, clean_redis: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NOSCRIPT on a lane (a restarted or promoted server): the calls go again on the lane as
    EVAL, not through redis-py (whose script loading, on a cluster, waits out a slot-map
    refresh while another primary fails over); the script is cached again for the next."""
    rooms = [f"n{i}" for i in range(6)]
    store = await laned_store(store_factory, rooms)
    through_redis_py: list[object] = []
    real_one = store._commits._one

    async def counted(*call: Any) -> None:
        through_redis_py.append(call)
        await real_one(*call)

    monkeypatch.setattr(store._commits, "_one", counted)
    for node in store_nodes(store, clean_redis):
        node.script_flush()
        node.close()
    before = store._commits.laned
    results = await asyncio.gather(*(store.commit(r, 1, b"v2", [ev(2)], None) for r in rooms))
    assert results == [True] * len(rooms)
    assert store._commits.laned - before == len(rooms) and through_redis_py == []
    assert await store.commit(rooms[0], 2, b"v3", [ev(3)], None)  # EVALSHA finds it again
    for room in rooms:
        assert (await store.load_room(room)).version >= 2  # type: ignore[union-attr]
    await store.close()


async def test_a_lone_commit_is_sent_as_it_is(store_factory: StoreFactory) -> None:
    store = redis_only(store_factory)
    await store.create_room("solo", b"v1", [], None)
    before = store._commits.round_trips
    assert await store.commit("solo", 1, b"v2", [ev(1)], None)
    assert store._commits.round_trips - before == 1
    assert await store.load_room("solo") == Snapshot(2, b"v2")
    await store.close()


async def test_every_connection_packs_its_commands_with_hiredis(
    store_factory: StoreFactory,
) -> None:
    store = redis_only(store_factory)
    await store.create_room("packed", b"v1", [ev(1)], None)  # connects (and finds the nodes)
    assert await store.load_room("packed") == Snapshot(1, b"v1")
    client = store._client
    if isinstance(client, RedisCluster):
        classes = {node.connection_class for node in client.get_nodes()}
        assert classes and classes <= {PackedConnection}
        template = client.nodes_manager.connection_kwargs["connection_class"]
        assert template is PackedConnection  # for nodes a failover or resharding adds
    else:
        assert client.connection_pool.connection_class is PackedConnection
    # A command name of two words goes out as two arguments, as redis-py sends it.
    assert PackedConnection(host="x").pack_command("SCRIPT LOAD", "return 1") == [
        b"*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n$8\r\nreturn 1\r\n"
    ]
    await store.close()


BUSY_LUA = """local t = redis.call('TIME')
while true do
  local n = redis.call('TIME')
  if (n[1] - t[1]) * 1000000 + (n[2] - t[2]) > tonumber(ARGV[1]) then return 1 end
end"""


def hold_redis(url: str, microseconds: int) -> socket.socket:
    """Redis busy for that long from now: a script sent on a raw socket, its reply unread."""
    address = redis.Redis.from_url(url).connection_pool.connection_kwargs
    sock = socket.create_connection((address["host"], address["port"]))
    sock.sendall(hiredis.pack_command(("EVAL", BUSY_LUA, 0, microseconds)))  # type: ignore[arg-type]
    # Redis accepts the socket in one turn of its loop and reads the script in a later one: a
    # command sent meanwhile on another connection could still be answered before the hold.
    time.sleep(0.05)
    return sock


async def test_commits_made_while_a_batch_is_out_go_together_as_the_next_one(
    store_factory: StoreFactory, clean_redis: str
) -> None:
    store = one_redis(store_factory, "it is held busy here")
    rooms = [f"f{i}" for i in range(21)]
    for room in rooms:
        await store.create_room(room, b"v1", [ev(1)], None)
    batcher = store._commits
    before = batcher.round_trips
    held = hold_redis(clean_redis, 500_000)
    try:

        async def commit_seeing_batches(room: str) -> tuple[bool, int]:
            applied = await store.commit(room, 1, b"v2", [ev(2)], None)
            return applied, batcher.round_trips - before  # batches sent when its caller resumes

        # The first batch: a leader and a call that joins it in the same turn.
        first = asyncio.create_task(commit_seeing_batches(rooms[0]))
        joined = asyncio.create_task(commit_seeing_batches(rooms[1]))
        for _ in range(3):
            await asyncio.sleep(0)  # the first batch is written; Redis has not answered
        assert batcher.batches_out == 1
        later: list[asyncio.Task[bool]] = []
        for room in rooms[2:]:  # one call per turn of the loop, all while the first is out
            later.append(asyncio.create_task(store.commit(room, 1, b"v2", [ev(2)], None)))
            await asyncio.sleep(0)
        assert not first.done()  # the premise: every later call was made while Redis was held
        assert (await first)[0] is True
        # The next batch went as the first one's replies came in, before its callers resumed.
        assert await joined == (True, 2)
        assert all(await asyncio.gather(*later))
    finally:
        held.close()
    assert batcher.round_trips - before == 2  # nineteen calls of nineteen turns: one pipeline
    for room in rooms:
        assert await store.load_room(room) == Snapshot(2, b"v2")
    await store.close()


async def test_on_a_busy_node_commits_a_few_turns_apart_share_a_round_trip(
    store_factory: StoreFactory,
) -> None:
    rooms = [f"b{i}" for i in range(8)]
    store = await laned_store(store_factory, rooms)
    batcher = store._commits
    assert batcher.lanes is not None
    servers = {batcher.lanes.ready(store._room_key(room, "state")) for room in rooms}

    async def spread(version: int) -> int:
        """A commit to every room, one per turn of the loop: the round trips they took."""
        before = batcher.round_trips
        tasks = []
        for room in rooms:
            tasks.append(
                asyncio.create_task(store.commit(room, version, b"v", [ev(version + 1)], None))
            )
            await asyncio.sleep(0)
        assert all(await asyncio.gather(*tasks))
        return batcher.round_trips - before

    # A quiet node: the first goes at once, the rest gather while it is out (one batch or more,
    # as fast as Redis answers).
    assert not batcher._load.busy(asyncio.get_running_loop().time(), batcher.calls)
    assert await spread(1) >= 2
    # A busy one (any rate counts as busy here, and a window far longer than the turns): the
    # leader waits, and all eight go in its pipeline (one to each server).
    batcher._load = LoadGauge(0.0)
    batcher._window = 0.2
    assert await spread(2) == len(servers)
    for room in rooms:
        assert await store.load_room(room) == Snapshot(3, b"v")
    await store.close()


def test_the_load_gauge_is_busy_at_its_rate_and_quiet_again_after_a_slice() -> None:
    gauge = LoadGauge(500.0, span=0.25)  # times in eighths of a second: exact in binary
    assert not gauge.busy(10.0, 0)  # the first question: nothing measured yet
    assert not gauge.busy(10.125, 80)  # inside the slice: as judged at its start
    assert gauge.busy(10.25, 150)  # 150 calls in 0.25 s: 600 a second
    assert gauge.busy(10.375, 151)  # still that slice's verdict
    assert not gauge.busy(10.5, 225)  # 75 in 0.25 s: 300 a second
    assert gauge.busy(10.75, 375)  # 150 again
    assert not gauge.busy(15.0, 376)  # quiet for seconds: the next call does not wait


async def test_a_cancelled_call_waiting_for_the_batch_out_leaves_the_next_one_free(
    store_factory: StoreFactory,
) -> None:
    store = redis_only(store_factory)
    rooms = ["w0", "w1", "w2"]
    for room in rooms:
        await store.create_room(room, b"v1", [ev(1)], None)
    first = asyncio.create_task(store.commit("w0", 1, b"v2", [ev(2)], None))
    for _ in range(3):
        await asyncio.sleep(0)
    waiting = asyncio.create_task(store.commit("w1", 1, b"v2", [ev(2)], None))
    await asyncio.sleep(0)  # it leads the next batch and waits for the first
    waiting.cancel()
    assert await first is True
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert await asyncio.wait_for(store.commit("w2", 1, b"v2", [ev(2)], None), 5) is True
    assert store._commits.batches_out == 0
    await store.close()


async def test_a_cancelled_leader_leaves_no_caller_of_its_batch_waiting(
    store_factory: StoreFactory,
) -> None:
    rooms = [f"c{i}" for i in range(12)]
    store = await laned_store(store_factory, rooms)
    lanes = store._commits.lanes
    assert lanes is not None
    server = [lanes.ready(store._room_key(room, "state")) for room in rooms]
    calls = [asyncio.create_task(store.commit(room, 1, b"v2", [ev(2)], None)) for room in rooms]
    await asyncio.sleep(0)  # each call has reached the batcher: the first leads, the rest joined
    calls[0].cancel()  # the node stopping, while its batch gathers
    results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 5)
    assert isinstance(results[0], asyncio.CancelledError)
    # Its batch's calls: outcome unknown. A cluster's other primaries had batches of their own.
    for i in range(1, len(rooms)):
        if server[i] is server[0]:
            assert isinstance(results[i], StoreUnavailable), results
        else:
            assert results[i] is True, results
    await store.close()


async def lane_open(store: RedisRoomStore, room: str) -> None:
    """Wait for the lane to ``room``'s server (a first call opens it, for the next ones)."""
    lanes = store._commits.lanes
    assert lanes is not None
    for _ in range(100):
        if lanes.ready(store._room_key(room, "state")) is not None:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("no lane opened")


async def laned_store(store_factory: StoreFactory, rooms: list[str]) -> RedisRoomStore:
    """A Redis store whose lanes are open: a first commit per room, then a moment to connect."""
    store = redis_only(store_factory)
    for room in rooms:
        await store.create_room(room, b"v1", [ev(1)], None)
    for _ in range(100):
        if store._commits._lanes is not None and all(
            store._commits._lanes.ready(store._room_key(r, "state")) for r in rooms
        ):
            return store
        await asyncio.sleep(0.02)
    raise AssertionError("no lane opened")


async def test_on_lanes_commits_keep_their_answers(store_factory: StoreFactory) -> None:
    rooms = [f"l{i}" for i in range(20)]
    store = await laned_store(store_factory, rooms)
    batcher = store._commits
    before = batcher.laned

    async def commit(i: int, room: str) -> bool | str:
        version = 4 if i == 2 else 1
        try:
            return await store.commit(room, version, b"v2-%d" % i, [ev(2 if i != 6 else 1)], None)
        except ValueError:
            return "bad seq"

    results = await asyncio.gather(*(commit(i, room) for i, room in enumerate(rooms)))
    assert batcher.laned - before == len(rooms)  # every call went on a lane
    assert results[2] is False and results[6] == "bad seq"
    assert all(r is True for i, r in enumerate(results) if i not in (2, 6))
    await assert_stored(store, rooms, {2, 6})
    await store.close()


async def test_on_lanes_the_deadline_sweep_finds_what_redis_py_finds(
    store_factory: StoreFactory,
) -> None:
    rooms = [f"d{i:02}" for i in range(24)]  # spread over many of the deadline shards
    store = await laned_store(store_factory, rooms)
    for i, room in enumerate(rooms):
        assert await store.commit(room, 1, b"v2", [ev(2)], 1000.0 + i)
    deadlines = store._deadlines
    deadlines.forget_hints()
    deadlines._hints = [math.inf] * len(deadlines._hints)  # only the sweep can find them
    before = deadlines.laned_reads
    # Several shards due at once: peeked on the lanes too, earliest first across shards.
    assert await store.claim_due(1010.5, 4, 30.0) == rooms[:4]
    assert deadlines.laned_reads > before  # the sweep and the peek went on a lane
    assert await store.claim_due(1010.5, 100, 30.0) == rooms[4:11]
    assert await store.claim_due(1010.5, 100, 30.0) == []
    assert await store.next_deadline(rooms[11]) == 1011.0  # not due: untouched
    # With no lane at all, redis-py reads the same.
    plain = ShardedDeadlines(store._client, store.keys, store._claim_script)
    await plain._sweep(0.0)
    before = deadlines.laned_reads
    await deadlines._sweep(0.0)
    assert plain.laned_reads == 0 and deadlines.laned_reads == before + len(deadlines._hints)
    assert plain._hints == deadlines._hints
    assert sorted(h for h in plain._hints if h < math.inf)[:2] == [1011.0, 1012.0]
    await store.close()


async def test_on_lanes_a_flushed_script_cache_is_handed_to_redis_py(
    store_factory: StoreFactory, clean_redis: str
) -> None:
    rooms = [f"n{i}" for i in range(8)]
    store = await laned_store(store_factory, rooms)
    if store.cluster:
        pytest.skip("one Redis: its script cache is flushed here")
    client = redis.Redis.from_url(clean_redis)
    try:
        client.script_flush()
    finally:
        client.close()
    before = store._commits.laned
    results = await asyncio.gather(*(store.commit(r, 1, b"v2", [ev(2)], None) for r in rooms))
    assert store._commits.laned > before  # they went on the lane, got NOSCRIPT, then redis-py
    assert results == [True] * len(rooms)
    for room in rooms:
        assert await store.load_room(room) == Snapshot(2, b"v2")
    await store.close()


async def test_a_lane_lost_mid_flight_leaves_each_commit_applied_once(
    store_factory: StoreFactory,
) -> None:
    rooms = [f"k{i}" for i in range(10)]
    store = await laned_store(store_factory, rooms)
    lanes = store._commits._lanes
    assert lanes is not None
    calls = [asyncio.create_task(store.commit(r, 1, b"v2", [ev(2)], None)) for r in rooms]
    for _ in range(3):
        await asyncio.sleep(0)  # the batch is written to its lanes; no reply is read yet
    unread = 0
    for room in rooms:
        lane = lanes.ready(store._room_key(room, "state"))
        if lane is not None and lane.transport is not None:
            unread += len(lane._waiting)
            lane.transport.abort()  # the connection drops with the replies unread
    assert unread > 0
    # Outcome unknown to the lane: redis-py replays each, and the nonce recognises those
    # already applied, so every commit succeeds and none is applied twice.
    assert await asyncio.gather(*calls) == [True] * len(rooms)
    for room in rooms:
        assert await store.load_room(room) == Snapshot(2, b"v2")
        assert [e.seq for e in await store.events_since(room, 0) or []] == [1, 2]
    await store.close()


async def test_a_lane_whose_greeting_is_refused_leaves_no_connection_open(
    clean_redis: str,
) -> None:
    """SELECT of a database the server does not have: no lane, and its connection closed
    (not left open, retried every ``RETRY_AFTER``, one more each time)."""
    admin = redis.Redis.from_url(clean_redis)
    try:
        clients = len(admin.client_list())
        store = RedisRoomStore(clean_redis.rsplit("/", 1)[0] + "/99", prefix="badselect")
        lanes = store._commits.lanes
        assert lanes is not None
        for _ in range(3):
            assert lanes.ready(store._room_key("x", "state")) is None
            await asyncio.sleep(RETRY_AFTER + 0.1)
        assert len(admin.client_list()) == clients
        await store.close()
    finally:
        admin.close()


async def test_a_lane_authenticates_and_selects_the_database(clean_redis: str) -> None:
    admin = redis.Redis.from_url(clean_redis)
    admin.config_set("requirepass", "lane-secret")
    try:
        host_port = clean_redis.split("://", 1)[1].split("/", 1)[0]
        store = RedisRoomStore(f"redis://:lane-secret@{host_port}/3", prefix="lanetest")
        await store.create_room("auth", b"v1", [], None)
        for _ in range(100):
            if store._commits._lanes and store._commits._lanes.ready("x"):
                break
            await asyncio.sleep(0.02)
        before = store._commits.laned
        assert await store.commit("auth", 1, b"v2", [ev(1)], None)
        assert store._commits.laned == before + 1
        assert await store.load_room("auth") == Snapshot(2, b"v2")
        db3 = redis.Redis.from_url(f"redis://:lane-secret@{host_port}/3")
        assert db3.keys("lanetest:*")
        db3.flushdb()
        db3.close()
        await store.close()
    finally:
        admin = redis.Redis.from_url(clean_redis.replace("://", "://:lane-secret@", 1))
        admin.config_set("requirepass", "")
        admin.close()


async def test_on_a_cluster_a_moved_slot_is_handed_to_redis_py_which_follows_it(
    store_factory: StoreFactory,
) -> None:
    store = await laned_store(store_factory, ["moved"])
    client = store._client
    if not isinstance(client, RedisCluster):
        pytest.skip("slots are a cluster's")
    key = store._room_key("moved", "state")
    slot = client.keyslot(key)
    owner = client.get_node_from_key(key)
    wrong = next(n for n in client.get_primaries() if n.name != owner.name)
    # The client's slot map is stale (a resharding it has not heard of): the lane goes to the
    # wrong primary, which answers MOVED; redis-py then follows the slot and refreshes its map.
    client.nodes_manager.slots_cache[slot] = [wrong]
    lanes = store._commits._lanes
    assert lanes is not None
    for _ in range(100):
        if lanes.ready(key) is not None:
            break
        await asyncio.sleep(0.02)
    before = store._commits.laned
    assert await store.commit("moved", 1, b"v2", [ev(2)], None)
    assert store._commits.laned == before + 1
    assert await store.load_room("moved") == Snapshot(2, b"v2")
    assert client.get_node_from_key(key).name == owner.name  # the map was put right
    await store.close()


def test_lanes_open_on_uvloop(clean_redis: str) -> None:
    """The server runs on uvloop, whose transports are not asyncio's classes."""
    import uvloop

    async def main() -> int:
        store = RedisRoomStore(clean_redis, prefix="uvlane")
        await store.create_room("uv", b"v1", [], None)
        await lane_open(store, "uv")
        before = store._commits.laned
        assert await store.commit("uv", 1, b"v2", [ev(1)], None)
        laned = store._commits.laned - before
        await store.close()
        return laned

    assert uvloop.run(main()) == 1


def test_redis_errors_become_the_stores_own() -> None:
    """``store_errors``: lost connections and a slot no node owns yet (a cluster mid-failover:
    redis-py's SlotNotCoveredError is not a RedisError) are StoreUnavailable, other Redis errors
    StoreError, and anything else goes through unchanged."""
    cases: list[tuple[BaseException, type[BaseException]]] = [
        (RedisConnectionError("gone"), StoreUnavailable),
        (SlotNotCoveredError('Slot "1" is not covered by the cluster.'), StoreUnavailable),
        (ConnectionRefusedError(111, "refused"), StoreUnavailable),
        (ResponseError("WRONGTYPE"), StoreError),
        (KeyError("not redis"), KeyError),
    ]
    for raised, expected in cases:
        with pytest.raises(expected) as caught, store_errors():
            raise raised
        assert caught.value is raised or caught.value.__cause__ is raised


async def test_a_unix_socket_url_gets_lanes_too(redis_unix_url: str) -> None:
    """A node beside its Redis reaches it by the socket file; its commits still go on a lane,
    not through redis-py."""
    store = RedisRoomStore(redis_unix_url, prefix="unixlane")
    await store.create_room("ux", b"v1", [], None)
    await lane_open(store, "ux")
    before = store._commits.laned
    assert await store.commit("ux", 1, b"v2", [ev(1)], None)
    assert store._commits.laned == before + 1
    assert await store.load_room("ux") == Snapshot(2, b"v2")
    await store.close()


@contextlib.asynccontextmanager
async def own_redis_store(
    prefix: str, query: str = ""
) -> AsyncIterator[tuple[RedisRoomStore, subprocess.Popen[bytes], int]]:
    """A store on a redis-server of its own (the test may freeze it): the store, the server's
    process and its port. ``query`` is the URL's, such as ``?socket_timeout=0.5``."""
    process, port, workdir = _start_redis()
    store = RedisRoomStore(f"redis://127.0.0.1:{port}/0{query}", prefix=prefix)
    try:
        yield store, process, port
    finally:
        await store.close()
        process.terminate()
        process.wait()
        shutil.rmtree(workdir, ignore_errors=True)


async def test_the_reply_timeout_comes_from_the_url_for_lanes_and_redis_py_alike() -> None:
    """``?socket_timeout=0.5``: an operator's shorter (or longer) bound holds on both paths."""
    async with own_redis_store("short", "?socket_timeout=0.5") as (store, process, _):
        await store.create_room("r", b"v1", [ev(1)], None)
        await lane_open(store, "r")
        process.send_signal(signal.SIGSTOP)
        try:
            for call in (store.commit("r", 1, b"v2", [ev(2)], None), store.load_room("r")):
                started = time.monotonic()
                with pytest.raises(StoreUnavailable):
                    await asyncio.wait_for(call, 3)
                assert 0.45 <= time.monotonic() - started <= 1.2
        finally:
            process.send_signal(signal.SIGCONT)


async def test_a_redis_silent_on_the_script_resend_fails_the_commit_without_redis_py(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """NOSCRIPT, then the server stops answering the EVAL sent again on the lane: the commit
    fails with the lane's timeout, as a first send that timed out does, and is not handed to
    redis-py, which would wait as long again on the same silent server."""
    async with own_redis_store("resend", "?socket_timeout=0.5") as (store, process, port):
        await store.create_room("r", b"v1", [ev(1)], None)
        await lane_open(store, "r")
        lanes = store._commits.lanes
        assert lanes is not None
        lane = lanes.ready(store._room_key("r", "state"))
        through_redis_py: list[object] = []
        real_one, real_call = store._commits._one, Lane.call

        async def counted(*call: Any) -> None:
            through_redis_py.append(call)
            await real_one(*call)

        def freezing(self: Lane, commands: Any) -> Any:
            if self is lane and commands[0][0] == "EVAL":
                process.send_signal(signal.SIGSTOP)  # it answered NOSCRIPT, then went silent
            return real_call(self, commands)

        monkeypatch.setattr(store._commits, "_one", counted)
        monkeypatch.setattr(Lane, "call", freezing)
        flushing = redis.Redis(host="127.0.0.1", port=port)
        flushing.script_flush()
        flushing.close()
        try:
            with pytest.raises(StoreUnavailable):
                await asyncio.wait_for(store.commit("r", 1, b"v2", [ev(2)], None), 5)
        finally:
            process.send_signal(signal.SIGCONT)
        assert through_redis_py == []


async def test_a_deadline_read_silent_on_its_lane_is_not_read_again_through_redis_py(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A scheduler pass on a silent Redis: the sweep's read times out on the lane and the pass
    reports the outage then, not after redis-py has waited as long again on the same server
    (it did: twice the reply timeout before it said so)."""
    async with own_redis_store("sweep", "?socket_timeout=0.5") as (store, process, _):
        await store.create_room("r", b"v1", [ev(1)], time.time() + 60)
        deadlines = store._deadlines
        lanes = store._commits.lanes
        assert lanes is not None
        for _ in range(100):  # a pass or two opens the lane to the deadline shard's server
            await store.claim_due(time.time(), 10, 30.0)
            if deadlines.laned_reads:
                break
            await asyncio.sleep(0.02)
        assert deadlines.laned_reads
        through_redis_py: list[list[int]] = []
        real_read = deadlines._read_redis_py

        def counted(keys: Any, which: list[int], read: Any, reads: Any) -> None:
            if which:
                through_redis_py.append(which)
            real_read(keys, which, read, reads)

        monkeypatch.setattr(deadlines, "_read_redis_py", counted)
        deadlines._swept_at = -math.inf  # this pass sweeps
        process.send_signal(signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(StoreUnavailable):
                await asyncio.wait_for(store.claim_due(time.time(), 10, 30.0), 5)
            waited = time.monotonic() - started
        finally:
            process.send_signal(signal.SIGCONT)
        assert through_redis_py == []
        assert 0.45 <= waited <= 0.9  # one timeout, not two


async def test_a_wait_as_long_as_the_reply_timeout_is_refused() -> None:
    """WAIT's own timeout must leave the reply time to arrive, or waiting commits time out."""
    with pytest.raises(ValueError, match="reply timeout"):
        RedisRoomStore("redis://127.0.0.1:1/0", wait_replicas=1, wait_ms=1000)
    for accepted in (
        RedisRoomStore("redis://127.0.0.1:1/0?socket_timeout=5", wait_replicas=1, wait_ms=1000),
        RedisRoomStore("redis://127.0.0.1:1/0", wait_replicas=0, wait_ms=5000),  # no WAIT sent
    ):
        await accepted.close()


async def test_a_redis_that_stops_answering_fails_each_call_in_bounded_time() -> None:
    """A server alive with its sockets open that answers nothing (SIGSTOP; a partition or a
    swapping host looks the same): a commit on its lane, a load through redis-py and the
    deadline claim each fail with StoreUnavailable in about ``REPLY_TIMEOUT``, not after the
    kernel's TCP timeouts; and once it answers again the store works, on a new lane."""
    async with own_redis_store("frozen") as (store, process, _):
        await store.create_room("r", b"v1", [ev(1)], None)
        await lane_open(store, "r")
        laned = store._commits.laned
        process.send_signal(signal.SIGSTOP)  # alive, its sockets open, answering nothing
        try:
            calls = {
                "commit": store.commit("r", 1, b"v2", [ev(2)], None),
                "load": store.load_room("r"),
                "claim": store.claim_due(time.time() + 60, 10, 30.0),
            }
            for name, call in calls.items():
                started = time.monotonic()
                with pytest.raises(StoreUnavailable):
                    await asyncio.wait_for(call, REPLY_TIMEOUT + 2)
                waited = time.monotonic() - started
                assert REPLY_TIMEOUT * 0.9 <= waited <= REPLY_TIMEOUT + 1.5, (name, waited)
            assert store._commits.laned == laned + 1  # the commit went on the lane, and failed
        finally:
            process.send_signal(signal.SIGCONT)
        # The commit's outcome is unknown: the server may yet run what was sent before the
        # lane closed (it had the bytes). It is applied whole or not at all.
        snapshot = await store.load_room("r")
        assert snapshot in (Snapshot(1, b"v1"), Snapshot(2, b"v2"))
        assert snapshot is not None
        await asyncio.sleep(RETRY_AFTER)  # a failed server gets no lane for this long
        await lane_open(store, "r")
        before = store._commits.laned
        version = snapshot.version
        assert await store.commit("r", version, b"v9", [ev(version + 1)], None)
        assert store._commits.laned == before + 1
        assert await store.load_room("r") == Snapshot(version + 1, b"v9")
