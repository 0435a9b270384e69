"""The journaled room store: what one process committed, the next one opens, stopped or killed.

The contract suite (tests/contract/test_store_contract.py, backend "journal") checks that the
journaled store behaves as the others while it runs; these tests close or kill it and reopen
the same file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from server.store import Archive, Snapshot, StoredEvent, StoreError, StoreUnavailable, open_store
from server.store.memory.journal import RoomJournal
from server.store.memory.rooms import MemoryRoomStore
from server.store.sqlite import open_room_store
from server.store.sqlite.journal import FILE_NAME

ROOT = Path(__file__).resolve().parents[3]


def evs(first: int, last: int) -> list[StoredEvent]:
    return [StoredEvent(seq, f"e{seq}".encode() + b"\x00\xff") for seq in range(first, last + 1)]


async def everything(store: MemoryRoomStore, room: str) -> tuple[object, ...]:
    """All a store answers about a room."""
    return (
        await store.load_room(room),
        await store.events_since(room, 0),
        await store.next_deadline(room),
        await store.archived(room, "g1"),
    )


async def test_a_reopened_store_has_every_room_as_committed(tmp_path: Path) -> None:
    store = open_room_store(tmp_path)
    assert await store.create_room("r1", b"v1", evs(1, 2), 100.0)
    assert await store.commit("r1", 1, b"v2\x00", evs(3, 4), 200.0, Archive("g1", {"1:over": b"a"}))
    assert await store.commit("r1", 2, b"v3", [], None, Archive("g1", {"2:over": b"b"}))
    assert await store.create_room("r2", b"w1", [], 50.0)
    assert await store.create_room("gone", b"x", evs(1, 1), 10.0)
    assert await store.delete_room("gone")
    before = [await everything(store, room) for room in ("r1", "r2", "gone")]
    await store.close()

    again = open_room_store(tmp_path)
    try:
        assert [await everything(again, room) for room in ("r1", "r2", "gone")] == before
        assert before[0] == (Snapshot(3, b"v3"), evs(1, 4), None, {"1:over": b"a", "2:over": b"b"})
        assert await again.claim_due(1000.0, 10, 30.0) == ["r2"]  # r1's deadline was cleared
        # The log goes on after the last seq it held, and refuses what came before it.
        with pytest.raises(ValueError):
            await again.commit("r1", 3, b"v4", evs(4, 4), None)
        assert await again.commit("r1", 3, b"v4", evs(5, 5), None)
        assert await again.events_since("r1", 3) == evs(4, 5)
    finally:
        await again.close()


async def test_the_log_is_trimmed_as_in_memory_and_stays_trimmed(tmp_path: Path) -> None:
    store = open_room_store(tmp_path, max_log=3)
    await store.create_room("r1", b"v", evs(1, 2), None)
    for version in range(1, 5):
        await store.commit("r1", version, b"v", evs(2 * version + 1, 2 * version + 2), None)
    answers = [await store.events_since("r1", seq) for seq in range(11)]
    assert answers[7:] == [evs(8, 10), evs(9, 10), evs(10, 10), []]
    assert answers[:7] == [None] * 7
    await store.close()
    with contextlib.closing(sqlite3.connect(tmp_path / FILE_NAME)) as db:
        assert db.execute("SELECT seq FROM events ORDER BY seq").fetchall() == [(8,), (9,), (10,)]
    again = open_room_store(tmp_path, max_log=3)
    try:
        assert [await again.events_since("r1", seq) for seq in range(11)] == answers
    finally:
        await again.close()


async def test_deadline_moves_the_clock_and_tracked_rooms_are_reopened(tmp_path: Path) -> None:
    store = open_room_store(tmp_path)
    for k, room in enumerate(("a", "b", "c")):
        await store.create_room(room, b"s", [], 100.0 + k)
    assert await store.claim_due(101.0, 10, 30.0) == ["a", "b"]  # a claim's lease: 131
    assert await store.shift_deadlines(5.0) == 3
    assert await store.heartbeat(1000.0) is None
    await store.record_outage(1000.0, 5.0)
    await store.node_alive("old-node", 60.0)
    await store.track_room("old-node", "a")
    await store.track_room("old-node", "b")
    await store.untrack_room("old-node", "b")
    await store.close()

    again = open_room_store(tmp_path)
    try:
        assert [await again.next_deadline(room) for room in "abc"] == [136.0, 136.0, 107.0]
        assert await again.claim_due(110.0, 10, 30.0) == ["c"]
        assert await again.heartbeat(1001.0) == 1000.0
        assert await again.last_outage() == (1000.0, 5.0)
        # Liveness is not kept: the node before the restart is dead, and reaped once.
        assert await again.reap_nodes() == [("old-node", ["a"])]
    finally:
        await again.close()
    third = open_room_store(tmp_path)
    try:
        assert await third.reap_nodes() == []
        assert await third.heartbeat(1002.0) == 1001.0
    finally:
        await third.close()


async def test_a_time_to_live_runs_on_across_a_restart(tmp_path: Path) -> None:
    store = open_room_store(tmp_path)
    for room in ("short", "long", "kept"):
        await store.create_room(room, b"v1", evs(1, 1), None)
    await store.commit("short", 1, b"v2", [], None, Archive("g1", {"a": b"1"}), 0.2)
    await store.commit("long", 1, b"v2", [], None, Archive("g1", {"a": b"1"}), 0.8)
    await store.commit("kept", 1, b"v2", [], None, None, 0.2)
    await store.commit("kept", 2, b"v3", [], None, None, None)  # back in play: no expiry
    await store.close()
    await asyncio.sleep(0.4)

    again = open_room_store(tmp_path)
    try:
        with contextlib.closing(sqlite3.connect(tmp_path / FILE_NAME)) as db:  # not loaded
            assert db.execute("SELECT id FROM rooms ORDER BY id").fetchall() == [
                ("kept",),
                ("long",),
            ]
            assert db.execute("SELECT room FROM events ORDER BY room").fetchall() == [
                ("kept",),
                ("long",),
            ]
        assert await everything(again, "short") == (None, None, None, {})
        assert await again.load_room("long") == Snapshot(2, b"v2")
        await asyncio.sleep(0.6)
        assert await everything(again, "long") == (None, None, None, {})
        assert await again.load_room("kept") == Snapshot(3, b"v3")
        assert await again.create_room("short", b"new", [], None)  # the code is free again
        assert await again.events_since("short", 0) == []
        assert await again.archived("short", "g1") == {}
    finally:
        await again.close()


CRASHING_NODE = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from server.store import Archive, StoredEvent
    from server.store.sqlite import open_room_store

    async def main() -> None:
        store = open_room_store(Path(sys.argv[1]))
        await store.create_room("r1", b"v1", [StoredEvent(1, b"one")], 500.0)
        for version in range(1, 40):
            event = [StoredEvent(version + 1, b"e%d" % version)]
            records = Archive("g", {str(version): b"r"})
            assert await store.commit("r1", version, b"v%d" % (version + 1), event, 600.0, records)
        await store.heartbeat(1234.5)
        print("committed", flush=True)
        await asyncio.sleep(60)  # killed here, the store never closed

    asyncio.run(main())
    """
)


async def test_a_killed_process_loses_nothing_it_committed(tmp_path: Path) -> None:
    node = subprocess.Popen(
        [sys.executable, "-c", CRASHING_NODE, str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert node.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(node.stdout.readline), 30)
        assert line == b"committed\n"
        # Still running, it holds the data folder: a second node refuses to open it.
        with pytest.raises(StoreError, match="in use"):
            open_room_store(tmp_path)
    finally:
        node.send_signal(signal.SIGKILL)
        node.wait()
    assert (tmp_path / (FILE_NAME + "-wal")).exists()  # not folded back: nothing closed it

    store = open_room_store(tmp_path)
    try:
        assert await store.load_room("r1") == Snapshot(40, b"v40")
        assert await store.events_since("r1", 0) == [
            StoredEvent(1, b"one"),
            *(StoredEvent(v + 1, b"e%d" % v) for v in range(1, 40)),
        ]
        assert await store.next_deadline("r1") == 600.0
        assert len(await store.archived("r1", "g")) == 39
        assert await store.heartbeat(2000.0) == 1234.5
    finally:
        await store.close()


async def test_one_process_per_data_folder_until_it_closes(tmp_path: Path) -> None:
    store = open_room_store(tmp_path)
    with pytest.raises(StoreError, match="in use"):
        open_room_store(tmp_path)
    await store.close()
    again = open_room_store(tmp_path)
    await again.close()


class RefusingJournal(RoomJournal):
    """A journal whose disk is full: every write is refused."""

    def put_room(self, room_id: str, **_: object) -> None:
        raise StoreUnavailable("disk full")

    def drop_rooms(self, room_ids: Sequence[str]) -> None:
        raise StoreUnavailable("disk full")

    def set_deadlines(self, deadlines: object) -> None:
        raise StoreUnavailable("disk full")


async def test_a_change_the_journal_refuses_is_not_made(tmp_path: Path) -> None:
    journal = RoomJournal()
    store = MemoryRoomStore(journal=journal)
    await store.create_room("r1", b"v1", evs(1, 1), 10.0)
    sub = store.subscriber()
    await sub.add("r1")
    before = await everything(store, "r1")
    store._journal = RefusingJournal()  # the disk fills up
    with pytest.raises(StoreUnavailable):
        await store.commit("r1", 1, b"v2", evs(2, 2), 20.0, Archive("g1", {"a": b"1"}))
    with pytest.raises(StoreUnavailable):
        await store.create_room("r2", b"v1", [], None)
    with pytest.raises(StoreUnavailable):
        await store.delete_room("r1")
    with pytest.raises(StoreUnavailable):
        await store.claim_due(100.0, 10, 30.0)
    assert await everything(store, "r1") == before
    assert await store.load_room("r2") is None
    store._journal = journal  # space again: the claim finds the room still due
    assert await store.claim_due(100.0, 10, 30.0) == ["r1"]
    with pytest.raises(TimeoutError):  # nothing refused was published
        await asyncio.wait_for(anext(sub), 0.1)
    await store.close()


async def test_open_store_journals_only_with_a_data_folder(tmp_path: Path) -> None:
    store = open_store(None, data_dir=tmp_path / "data", max_log=7)
    assert isinstance(store, MemoryRoomStore) and store.max_log == 7
    await store.create_room("r1", b"v1", [], None)
    await store.close()
    again = open_store("", data_dir=tmp_path / "data")
    assert await again.load_room("r1") == Snapshot(1, b"v1")
    await again.close()
    # memory:// keeps nothing, even with a data folder; no folder, nothing either.
    for url in ("memory://", None):
        plain = open_store(url, data_dir=tmp_path / "plain" if url else None)
        await plain.create_room("r1", b"v1", [], None)
        await plain.close()
    assert not (tmp_path / "plain").exists()
