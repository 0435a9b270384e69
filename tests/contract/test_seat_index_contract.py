"""The players' index of rooms (issue 54's "Your games"), the same on every backend: kept
beside the rooms, read by any node, and (journaled) kept across a restart."""

from __future__ import annotations

from pathlib import Path

from server.store import RoomStore
from server.store.sqlite import open_room_store
from tests.conftest import StoreFactory


async def test_players_rooms_are_added_and_taken_out_and_any_node_reads_them(
    store_factory: StoreFactory,
) -> None:
    store = store_factory()
    other = store_factory.peer(store)
    await store.index_seats("roomA", ["ann", "bob"], [])
    await store.index_seats("roomB", ["ann"], [])
    await store.index_seats("roomA", ["ann"], [])  # again: nothing more
    assert await other.seated_rooms("ann") == ["roomA", "roomB"]
    assert await other.seated_rooms("bob") == ["roomA"]
    await other.index_seats("roomA", [], ["ann", "bob"])
    assert await store.seated_rooms("ann") == ["roomB"]
    assert await store.seated_rooms("bob") == []
    assert await store.seated_rooms("nobody") == []
    await store.index_seats("roomB", [], ["cleo"])  # taking out what is not there: nothing


async def test_the_embedded_nodes_index_outlives_a_restart(tmp_path: Path) -> None:
    store: RoomStore = open_room_store(tmp_path / "node")
    await store.index_seats("roomA", ["ann"], [])
    await store.index_seats("roomB", ["ann"], [])
    await store.index_seats("roomB", [], ["ann"])
    await store.close()
    again = open_room_store(tmp_path / "node")
    try:
        assert await again.seated_rooms("ann") == ["roomA"]
    finally:
        await again.close()
