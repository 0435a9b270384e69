"""A socket that closes while the store is unreachable still leaves: the hub lets go of the room
whatever the store says, and the seat's ``Disconnect`` is tried again until the store answers
(or a while has passed), so the seat does not read connected for good."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from protocol.codec import JSON, Codec
from server.accounts.identity import Identity
from server.core.room.commands import Disconnect, RoomError
from server.fanout.hub import Hub
from server.net.connection import Connection
from server.play.actors import Actors
from server.store import MemoryRoomStore, StoreUnavailable
from tests.fanout.test_fan_out import Socket


async def test_unwatching_with_the_store_down_still_lets_go_of_the_room() -> None:
    store = MemoryRoomStore()
    await store.create_room("r", b"s0", [], None)
    actors = Actors()
    hub = Hub(store, "n", actors)
    await hub.start()
    try:
        sock = Socket()
        await hub.watch(sock, "r")
        actors.get("r")
        assert actors.peek("r") is not None

        async def down(*args: object) -> None:
            raise StoreUnavailable("Error 111 connecting to Redis")

        hub._sub.remove = down  # type: ignore[union-attr,method-assign]
        store.untrack_room = down  # type: ignore[method-assign,assignment]
        await hub.unwatch(sock, "r")  # no StoreUnavailable out of it
        assert "r" not in hub.watchers and actors.peek("r") is None
    finally:
        await hub.stop()


class Rooms:
    """``apply`` fails with ``codes`` in turn, then records the command."""

    def __init__(self, codes: list[str]) -> None:
        self.codes = codes
        self.applied: list[tuple[str, Any]] = []
        self.tries = 0

    async def apply(self, room: str, command: Any) -> None:
        self.tries += 1
        if self.codes:
            raise RoomError(self.codes.pop(0), "no")
        self.applied.append((room, command))


class Hubs:
    def __init__(self) -> None:
        self.unwatched: list[str] = []

    async def unwatch(self, conn: Connection, room: str) -> None:
        self.unwatched.append(room)


def seated(codes: list[str]) -> tuple[Connection, Rooms]:
    rooms = Rooms(codes)
    node = SimpleNamespace(id="n", rooms=rooms, hub=Hubs())
    conn = Connection(node, Codec(JSON))
    conn.identity = Identity("p1", "Pat")
    conn.room, conn.seat = "room1234", 2
    return conn, rooms


@pytest.fixture
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)  # what server.net.connection's waits call
    return waits


async def test_a_closed_socket_leaves_once_the_store_answers(no_waiting: list[float]) -> None:
    conn, rooms = seated(["store_unavailable", "outcome_unknown", "store_unavailable"])
    await conn.exit_room(retry_for=30.0)
    assert rooms.applied == [("room1234", Disconnect("p1", conn.id))]
    assert no_waiting == [0.25, 0.5, 1.0]  # backing off between tries
    assert conn.room is None and conn.seat is None


async def test_leaving_gives_up_after_its_time_and_a_refusal_is_not_retried(
    no_waiting: list[float],
) -> None:
    conn, rooms = seated(["store_unavailable"] * 100)
    await conn.exit_room(retry_for=5.0)
    assert rooms.applied == [] and rooms.tries == 5 and no_waiting == [0.25, 0.5, 1.0, 2.0]
    conn, rooms = seated(["not_seated"])
    await conn.exit_room(retry_for=30.0)
    assert rooms.tries == 1 and rooms.applied == []
    conn, rooms = seated(["store_unavailable"])
    await conn.exit_room()  # a command's own leaving (``leave``, a ``join`` elsewhere): once
    assert rooms.tries == 1


async def test_closing_retries_its_leaving(no_waiting: list[float]) -> None:
    conn, rooms = seated(["store_unavailable"])

    async def leave(c: Connection) -> None:
        pass

    conn.node.quickplay = SimpleNamespace(leave=leave)  # type: ignore[misc]
    await conn.on_close()
    assert rooms.applied == [("room1234", Disconnect("p1", conn.id))] and no_waiting == [0.25]
