"""The room store through a failover of a real cluster's primary: the replica takes over,
commits go on, fan-out follows the slot to its new owner, and WAIT bounds what can be lost."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.exceptions import SlotNotCoveredError

from server.store import StoredEvent, StoreUnavailable
from server.store.redis.client.connect import REPLY_TIMEOUT
from server.store.redis.keys import RoomKeys, shard_of
from server.store.redis.rooms import RedisRoomStore
from tests.support.redis_cluster import LocalCluster

pytestmark = pytest.mark.e2e

PREFIX = "hearts-failover"


async def commit_until_it_works(store: RedisRoomStore, room: str, timeout: float = 30) -> int:
    """Commit one more event, retrying through the failover; the version it reached."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            snap = await store.load_room(room)
            assert snap is not None
            seq = snap.version  # one event per version in this test
            if await store.commit(room, snap.version, b"s", [StoredEvent(seq, b"e")], None):
                return snap.version + 1
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


@pytest.mark.parametrize("uncovered", [False, True], ids=["", "slot-uncovered-mid-failover"])
async def test_fan_out_and_commits_follow_a_failover(
    own_cluster: LocalCluster, uncovered: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``uncovered``: the subscriber's first slot map refreshes after the kill give the room's
    slot no owner (as redis-py's may, mid-failover: ``SlotNotCoveredError``, not a RedisError);
    its reader must read on and move the room once the slot has one."""
    writer = RedisRoomStore(own_cluster.url, prefix=PREFIX, wait_replicas=1, wait_ms=500)
    reader = RedisRoomStore(own_cluster.url, prefix=PREFIX)
    sub = reader.subscriber()
    room = "failover-room"
    try:
        assert await writer.create_room(room, b"s", [], None)
        await sub.add(room)
        for version in range(1, 4):
            assert await writer.commit(room, version, b"s", [StoredEvent(version, b"e")], None)
        got = [await asyncio.wait_for(anext(sub), 5) for _ in range(3)]
        assert [e.seq for _, e in got] == [1, 2, 3]

        primary = own_cluster.owner_of_key(RoomKeys(PREFIX).tag(shard_of(room)))
        if uncovered:
            cluster = reader._client
            assert isinstance(cluster, RedisCluster)
            real, refusals = cluster.get_node_from_key, [3]

            def owner(key: str, replica: bool = False) -> ClusterNode | None:
                if refusals[0] > 0:
                    refusals[0] -= 1
                    raise SlotNotCoveredError(f"{key} is not covered")
                return real(key, replica)

            monkeypatch.setattr(cluster, "get_node_from_key", owner)
        own_cluster.kill(primary)
        version = await commit_until_it_works(writer, room)
        assert own_cluster.owner_of_key(RoomKeys(PREFIX).tag(shard_of(room))) != primary
        # WAIT made every acknowledged commit reach the replica that took over: none lost.
        assert version == 5
        # The subscriber moved the room to the new primary and backfilled the gap.
        room_id, event = await asyncio.wait_for(anext(sub), 20)
        assert (room_id, event.seq) == (room, 4)
        assert not uncovered or refusals == [0]  # the reader met every refusal and read on
        assert await writer.commit(room, 5, b"s", [StoredEvent(5, b"e")], None)
        room_id, event = await asyncio.wait_for(anext(sub), 5)
        assert (room_id, event.seq) == (room, 5)
    finally:
        await sub.close()
        await reader.close()
        await writer.close()


async def test_wait_on_one_redis_without_replicas_still_commits(clean_redis: str) -> None:
    """WAIT's timeout bounds the cost: with no replica the commit is acknowledged after it."""
    store = RedisRoomStore(clean_redis, prefix=PREFIX, wait_replicas=1, wait_ms=20)
    try:
        assert await store.create_room("r1", b"s", [], None)
        started = time.monotonic()
        assert await store.commit("r1", 1, b"s2", [StoredEvent(1, b"e")], 5.0)
        assert time.monotonic() - started >= 0.015
        assert (await store.load_room("r1")).state == b"s2"  # type: ignore[union-attr]
        assert not await store.commit("r1", 1, b"s3", [], None)  # still compare-and-set
    finally:
        await store.close()


async def test_claims_go_on_through_a_failover_and_no_room_is_claimed_twice(
    own_cluster: LocalCluster,
) -> None:
    """Two nodes' schedulers claim while a primary fails over: the rooms on the live primaries
    are claimed at once (a pass does not wait for the failing shard), the failing shard's once
    its replica answers, and every due room exactly once."""
    store = RedisRoomStore(own_cluster.url, prefix=PREFIX)
    peer = RedisRoomStore(own_cluster.url, prefix=PREFIX)
    keys = RoomKeys(PREFIX)
    try:
        rooms = [f"clock-{i}" for i in range(48)]  # over every primary
        now = await store.now()
        for room in rooms:
            assert await store.create_room(room, b"s", [], now - 1)
        victim = own_cluster.owner_of_key(keys.tag(shard_of(rooms[0])))
        on_victim = {r for r in rooms if own_cluster.owner_of_key(keys.tag(shard_of(r))) == victim}
        primary = redis.Redis(port=victim)
        try:
            assert primary.wait(1, 2000) >= 1  # the replica that takes over has every room
        finally:
            primary.close()
        own_cluster.kill(victim)
        started = time.monotonic()
        claimed: dict[str, list[float]] = {}  # room: when each claim of it came back

        async def schedule(node: RedisRoomStore) -> None:
            while len(claimed) < len(rooms) and time.monotonic() - started < 30:
                try:
                    got = await node.claim_due(now, 100, 30.0)
                except StoreUnavailable:
                    got = []
                for room in got:
                    claimed.setdefault(room, []).append(time.monotonic() - started)
                await asyncio.sleep(0.05)

        await asyncio.gather(schedule(store), schedule(peer))
        assert sorted(claimed) == sorted(rooms)  # every due room
        assert all(len(times) == 1 for times in claimed.values()), claimed  # none twice
        live = max(claimed[room][0] for room in rooms if room not in on_victim)
        failed_over = max(claimed[room][0] for room in on_victim)
        print(f"live shards' rooms claimed by {live:.1f}s, the failed one's by {failed_over:.1f}s")
        assert live < 1.5
    finally:
        await peer.close()
        await store.close()


async def test_a_primary_that_stops_answering_fails_its_commits_in_bounded_time_then_fails_over(
    own_cluster: LocalCluster,
) -> None:
    """A primary frozen (SIGSTOP: its sockets open, silent), as a badly lagging or partitioned
    node: a commit on its lane fails with StoreUnavailable in about ``REPLY_TIMEOUT``, commits to
    the other primaries go on meanwhile, and once its replica takes over the room commits there."""
    store = RedisRoomStore(own_cluster.url, prefix=PREFIX)
    keys = RoomKeys(PREFIX)
    rooms = [f"frozen-{i}" for i in range(16)]
    frozen: int | None = None
    try:
        for room in rooms:
            assert await store.create_room(room, b"s", [], None)
        owners = {room: own_cluster.owner_of_key(keys.tag(shard_of(room))) for room in rooms}
        room = rooms[0]
        other = next(r for r in rooms if owners[r] != owners[room])
        lanes = store._commits.lanes
        assert lanes is not None
        for _ in range(100):  # the first commits opened the lanes to both primaries
            if all(lanes.ready(store._room_key(r, "state")) for r in (room, other)):
                break
            await asyncio.sleep(0.02)
        frozen = owners[room]
        primary = redis.Redis(port=frozen)
        try:
            # Replication is asynchronous: the replica that takes over must have the room.
            assert primary.wait(1, 2000) >= 1
        finally:
            primary.close()
        own_cluster.freeze(frozen)
        started = time.monotonic()
        stuck = asyncio.ensure_future(store.commit(room, 1, b"s2", [StoredEvent(1, b"e")], None))
        # The other primary's room is not held up behind the silent one.
        assert await asyncio.wait_for(store.commit(other, 1, b"s2", [], None), 1.0)
        with pytest.raises(StoreUnavailable):
            await asyncio.wait_for(stuck, REPLY_TIMEOUT + 2)
        assert time.monotonic() - started <= REPLY_TIMEOUT + 1.5
        # Its replica takes over (cluster-node-timeout 1 s); the room commits on the new primary.
        version = await commit_until_it_works(store, room)
        assert version == 2
        assert own_cluster.owner_of_key(keys.tag(shard_of(room))) != frozen
    finally:
        if frozen is not None:
            own_cluster.thaw(frozen)
        await store.close()
