"""The Redis client's cost per command, on one Redis and on a Redis Cluster: group commit
(``server.store.redis_batching``: commits of one loop turn share a round trip, each keeping
its own answer) and commands packed by hiredis (``server.store.redis_packing``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
import redis
from redis.asyncio.cluster import RedisCluster

from server.store import Snapshot, StoredEvent, StoreUnavailable
from server.store.redis_packing import PackedConnection
from server.store.redis_store import RedisRoomStore

if TYPE_CHECKING:
    from tests.conftest import StoreFactory


def ev(seq: int) -> StoredEvent:
    return StoredEvent(seq, b"e%d" % seq)


def redis_only(store_factory: StoreFactory) -> RedisRoomStore:
    store = store_factory()
    if not isinstance(store, RedisRoomStore):
        pytest.skip("group commit is the Redis store's")
    return store


async def test_commits_of_one_turn_share_a_round_trip_and_keep_their_answers(
    store_factory: StoreFactory,
) -> None:
    store = redis_only(store_factory)
    rooms = [f"g{i}" for i in range(30)]  # over many shards (and cluster nodes)
    for room in rooms:
        await store.create_room(room, b"v1", [ev(1)], None)
    batcher = store._commits
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
    assert batcher.round_trips - before == 1  # thirty commits, one pipeline
    for i, room in enumerate(rooms):
        expected = Snapshot(1, b"v1") if i in (3, 5) else Snapshot(2, b"v2-%d" % i)
        assert await store.load_room(room) == expected
    await store.close()


async def test_a_batch_survives_a_flushed_script_cache(
    store_factory: StoreFactory, clean_redis: str
) -> None:
    store = store_factory()
    if not isinstance(store, RedisRoomStore) or store.cluster:
        pytest.skip("one Redis: its script cache is flushed here")
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


async def test_a_cancelled_leader_leaves_no_caller_of_its_batch_waiting(
    store_factory: StoreFactory,
) -> None:
    store = redis_only(store_factory)
    rooms = [f"c{i}" for i in range(5)]
    for room in rooms:
        await store.create_room(room, b"v1", [], None)
    calls = [asyncio.create_task(store.commit(room, 1, b"v2", [ev(1)], None)) for room in rooms]
    await asyncio.sleep(0)  # each call has reached the batcher: the first leads, the rest joined
    calls[0].cancel()  # the node stopping, while its batch gathers
    results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 5)
    assert isinstance(results[0], asyncio.CancelledError)
    assert all(isinstance(r, StoreUnavailable) for r in results[1:]), results  # outcome unknown
    await store.close()
