"""Fan-out on one node (``server.fanout.hub``): a node's own commits reach its sockets at once, each
event once and in order, and never ahead of an earlier event still coming from another node
(the room is caught up from the store first); and on Redis a commit is published only when
another node watches the room."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import pytest

from server.accounts.identity import Identity
from server.core.room.commands import ALL, Event
from server.fanout.commit_frames import CommitFrames
from server.fanout.hub import Hub
from server.play.actors import Actors
from server.play.rooms import encode_event
from server.store import MemoryRoomStore, StoredEvent
from server.store.redis.rooms import RedisRoomStore


class Socket:
    def __init__(self) -> None:
        self.id = "n/1"
        self.seat: int | None = None
        self.identity: Identity | None = None
        self.seen: list[int] = []
        self.last_seq = 0  # as a connection: from its view, then what it was given
        self.entering = False

    def deliver(self, out: CommitFrames) -> None:
        for seq in range(out.first_seq, out.first_seq + len(out.events)):
            if seq > self.last_seq:  # as a connection drops what its view already holds
                self.seen.append(seq)
                self.last_seq = seq


def event(n: int) -> Event:
    return Event(ALL, "note", {"n": n})


async def commit(store: MemoryRoomStore, version: int, first: int, count: int) -> list[Event]:
    events = [event(first + k) for k in range(count)]
    stored = [StoredEvent(first + k, encode_event(e)) for k, e in enumerate(events)]
    assert await store.commit("r", version, b"s%d" % version, stored, None)
    return events


async def until(done: Callable[[], bool]) -> None:
    """Wait up to a second for ``done`` (fan-out through a real Redis takes a moment)."""
    for _ in range(100):
        if done():
            return
        await asyncio.sleep(0.01)


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


@pytest.fixture
async def node() -> AsyncIterator[tuple[MemoryRoomStore, Hub, Socket]]:
    """A store with room "r", a started hub, and one socket watching the room."""
    store = MemoryRoomStore()
    await store.create_room("r", b"s0", [], None)
    hub = Hub(store, "n", Actors())
    await hub.start()
    sock = Socket()
    await hub.watch(sock, "r")
    yield store, hub, sock
    await hub.stop()


async def test_own_commits_are_handed_over_at_once_and_only_once(
    node: tuple[MemoryRoomStore, Hub, Socket],
) -> None:
    store, hub, sock = node
    # Before any seq of the room was handed over here, an own commit is caught up from the
    # store from the socket's view (seq 1 here) ...
    await commit(store, 1, 1, 1)
    sock.last_seq = 1
    events = await commit(store, 2, 2, 1)
    hub.committed("r", 2, events)
    assert sock.seen == []
    await settle()
    assert sock.seen == [2]
    # ... and then handed over at once. (A socket of seq 0 has no view: its entering failed.)
    events = await commit(store, 3, 3, 3)
    hub.committed("r", 3, events)
    assert sock.seen == [2, 3, 4, 5]
    await settle()
    assert sock.seen == [2, 3, 4, 5]  # fan-out's copies are passed over


async def test_an_own_commit_after_another_nodes_waits_for_fan_out(
    node: tuple[MemoryRoomStore, Hub, Socket],
) -> None:
    store, hub, sock = node
    await commit(store, 1, 1, 1)
    await settle()
    assert sock.seen == [1]
    # Another node commits seq 2; this node, having reloaded, commits 3 before fan-out
    # has brought 2 here. Handing 3 over now would make the socket skip 2: the room is caught
    # up from the store, 2 then 3.
    await commit(store, 2, 2, 1)
    mine = await commit(store, 3, 3, 1)
    hub.committed("r", 3, mine)
    assert sock.seen == [1]
    await settle()
    assert sock.seen == [1, 2, 3]


async def test_a_room_watched_again_starts_unknown(
    node: tuple[MemoryRoomStore, Hub, Socket],
) -> None:
    store, hub, sock = node
    await commit(store, 1, 1, 1)
    await settle()
    await hub.unwatch(sock, "r")
    await commit(store, 2, 2, 1)  # nobody here watches: this node never hands seq 2 over
    again = Socket()
    await hub.watch(again, "r")
    again.last_seq = 2  # its view of the room
    mine = await commit(store, 3, 3, 1)
    hub.committed("r", 3, mine)
    assert again.seen == []  # where delivery stands is not known here: caught up first
    await settle()
    assert again.seen == [3]


async def test_a_socket_without_a_view_is_not_sent_the_rooms_history(
    node: tuple[MemoryRoomStore, Hub, Socket],
) -> None:
    store, hub, sock = node
    await commit(store, 1, 1, 3)  # the room's history, before this socket's entering failed
    await settle()
    sock.seen.clear()
    hub._delivered.pop("r", None)  # as after the room was watched again
    sock.last_seq = 0  # no view: its join failed mid-way
    mine = await commit(store, 2, 4, 1)
    hub.committed("r", 4, mine)
    await settle()
    assert sock.seen == [4]  # not 1-3 again


async def test_sockets_still_entering_get_an_own_commit_at_once(
    node: tuple[MemoryRoomStore, Hub, Socket],
) -> None:
    store, hub, sock = node
    # The only socket is getting its view: whatever came before is in that view.
    sock.entering = True
    mine = await commit(store, 1, 1, 2)
    hub.committed("r", 1, mine)
    assert sock.seen == [1, 2]
    await settle()
    assert sock.seen == [1, 2]


@contextlib.asynccontextmanager
async def on_redis(
    url: str, prefix: str
) -> AsyncIterator[tuple[RedisRoomStore, RedisRoomStore, Hub, Socket]]:
    """Room "r" on one Redis, one socket watching it on node n1's hub, and n2's store beside;
    n1 has committed event 1 while the socket entered and handed it over."""
    mine = RedisRoomStore(url, prefix=prefix, node="n1")
    other = RedisRoomStore(url, prefix=prefix, node="n2")
    await mine.create_room("r", b"s0", [], None)
    hub = Hub(mine, "n1", Actors())
    await hub.start()
    sock = Socket()
    await hub.watch(sock, "r")
    try:
        sock.entering = True
        first = [event(1)]
        assert await mine.commit("r", 1, b"s1", [StoredEvent(1, encode_event(first[0]))], None)
        hub.committed("r", 1, first)
        sock.entering = False
        assert sock.seen == [1]
        yield mine, other, hub, sock
    finally:
        await hub.stop()
        await mine.close()
        await other.close()


async def test_on_redis_a_commit_is_published_only_when_another_node_watches(
    clean_redis: str,
) -> None:
    async with on_redis(clean_redis, "fanout") as (mine, other, hub, sock):
        heard = other.subscriber()
        try:
            # n1 alone watches: its own commit was not published, and its hub handed it over.
            # A raw subscriber (not a watching node) tells what is published.
            spy = mine._client.pubsub()
            await spy.ssubscribe(mine.channel("r"))
            await spy.get_message(timeout=1)  # the confirmation
            assert await mine.commit("r", 2, b"s2", [StoredEvent(2, encode_event(event(2)))], None)
            hub.committed("r", 2, [event(2)])
            assert sock.seen == [1, 2]
            assert await spy.get_message(timeout=0.3) is None  # nothing was published
            # Another node's commit is published to n1.
            assert await other.commit("r", 3, b"s3", [StoredEvent(3, encode_event(event(3)))], None)
            await until(lambda: sock.seen == [1, 2, 3])
            assert sock.seen == [1, 2, 3]
            published = await spy.get_message(timeout=1)
            assert published is not None and published["type"] == "smessage"
            # Once n2 watches too, n1's commits are published for it.
            await other.track_room("n2", "r")
            await heard.add("r")
            assert await mine.commit("r", 4, b"s4", [StoredEvent(4, encode_event(event(4)))], None)
            got = await asyncio.wait_for(heard.__anext__(), 2)
            assert got[0] == "r" and got[1].seq == 4
            await spy.aclose()
        finally:
            await heard.close()


async def test_on_redis_an_own_commit_behind_an_unpublished_one_is_caught_up(
    clean_redis: str,
) -> None:
    """A reply read after the fan-out of a later commit: the pump sees a gap and fills it from
    the store, so the socket gets every event in order."""
    async with on_redis(clean_redis, "gap") as (mine, other, hub, sock):
        # n1 commits 2 (not published: it is alone) but has not handed it over yet when n2's
        # commit 3 comes through fan-out.
        own = [event(2)]
        assert await mine.commit("r", 2, b"s2", [StoredEvent(2, encode_event(own[0]))], None)
        assert await other.commit("r", 3, b"s3", [StoredEvent(3, encode_event(event(3)))], None)
        await until(lambda: sock.seen == [1, 2, 3])
        assert sock.seen == [1, 2, 3]
        hub.committed("r", 2, own)  # the late reply: already delivered
        await settle()
        assert sock.seen == [1, 2, 3]
