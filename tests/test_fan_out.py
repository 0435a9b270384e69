"""Fan-out on one node (``server.hub``): a node's own commits reach its sockets at once, each
event once and in order, and never ahead of an earlier event still coming from another node."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest

from server.actors import Actors
from server.hub import Hub
from server.identity import Identity
from server.room.machine import ALL, Event
from server.rooms import encode_event
from server.store import MemoryRoomStore, StoredEvent


class Socket:
    def __init__(self) -> None:
        self.id = "n/1"
        self.seat: int | None = None
        self.identity: Identity | None = None
        self.seen: list[int] = []

    def deliver(
        self,
        room: str,
        first_seq: int,
        events: Sequence[Event],
        frames: Sequence[dict[str, bytes | str]],
    ) -> None:
        self.seen.extend(first_seq + k for k in range(len(events)))


def event(n: int) -> Event:
    return Event(ALL, "note", {"n": n})


async def commit(store: MemoryRoomStore, version: int, first: int, count: int) -> list[Event]:
    events = [event(first + k) for k in range(count)]
    stored = [StoredEvent(first + k, encode_event(e)) for k, e in enumerate(events)]
    assert await store.commit("r", version, b"s%d" % version, stored, None)
    return events


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
    # Before fan-out has shown any seq of the room, an own commit waits for fan-out.
    events = await commit(store, 1, 1, 2)
    hub.committed("r", 1, events)
    assert sock.seen == []
    await settle()
    assert sock.seen == [1, 2]
    # Now the hub knows seq 2: the next own commit is handed over synchronously.
    events = await commit(store, 2, 3, 3)
    hub.committed("r", 3, events)
    assert sock.seen == [1, 2, 3, 4, 5]
    await settle()
    assert sock.seen == [1, 2, 3, 4, 5]  # fan-out's copies are passed over


async def test_an_own_commit_after_another_nodes_waits_for_fan_out(
    node: tuple[MemoryRoomStore, Hub, Socket],
) -> None:
    store, hub, sock = node
    await commit(store, 1, 1, 1)
    await settle()
    assert sock.seen == [1]
    # Another node commits seq 2; this node, having reloaded, commits 3 before fan-out
    # has brought 2 here. Handing 3 over now would make the socket skip 2.
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
    mine = await commit(store, 3, 3, 1)
    hub.committed("r", 3, mine)
    assert again.seen == []  # seq 2 may still be on its way: wait for fan-out
    await settle()
    assert again.seen == [3]
