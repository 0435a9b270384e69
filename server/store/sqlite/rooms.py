"""The room store's journal in the embedded node's SQLite file (``server.store.sqlite.journal``).

One row per room (version, state, trim mark, expiry, deadline), its log's events and its
archive records beside it, the heartbeat and the last outage, and which node tracks which
rooms (so the node started after a crash reaps its predecessor's sockets from their rooms, as
a Redis deployment's nodes reap a dead one), and which rooms seat which player.
``MemoryRoomStore(journal=...)`` writes each change here, one transaction per store call, and
reads it all back when it is made.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from server.store.memory.journal import RestoredRooms, RoomJournal, RoomRecord
from server.store.rooms import Archive, StoredEvent
from server.store.sqlite.journal import JournalFile

_PUT_ROOM = """INSERT INTO rooms (id, version, state, trimmed, expires, deadline)
    VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET version = excluded.version, state = excluded.state,
    trimmed = excluded.trimmed, expires = excluded.expires, deadline = excluded.deadline"""
_PUT_RECORD = "INSERT OR REPLACE INTO archives (room, archive, name, data) VALUES (?, ?, ?, ?)"
_ROOM_TABLES = ("events", "archives")  # keyed by ``room``; ``rooms`` by ``id``


class SqliteRoomJournal(RoomJournal):
    def __init__(self, file: JournalFile) -> None:
        self.file = file

    def restore(self) -> RestoredRooms:
        read = self.file.read
        lapsed = read("SELECT id FROM rooms WHERE expires <= ?", (time.time(),))
        if lapsed:
            self.drop_rooms([room_id for (room_id,) in lapsed])
        restored = RestoredRooms()
        rooms = restored.rooms
        for room_id, version, state, trimmed, expires, deadline in read(
            "SELECT id, version, state, trimmed, expires, deadline FROM rooms"
        ):
            rooms[room_id] = RoomRecord(version, state, trimmed_through=trimmed, expires=expires)
            if deadline is not None:
                restored.deadlines[room_id] = deadline
        for room_id, seq, data in read("SELECT room, seq, data FROM events ORDER BY room, seq"):
            rooms[room_id].log.append(StoredEvent(seq, data))
        for room in rooms.values():
            room.last_seq = room.log[-1].seq if room.log else 0
        for room_id, archive, name, data in read("SELECT room, archive, name, data FROM archives"):
            rooms[room_id].archives.setdefault(archive, {})[name] = data
        for name, a, b in read("SELECT name, a, b FROM clock"):
            if name == "heartbeat":
                restored.heartbeat = a
            else:
                restored.outage = (a, b)
        for node, room_id in read("SELECT node, room FROM tracked"):
            restored.node_rooms.setdefault(node, set()).add(room_id)
        for player, room_id in read("SELECT player, room FROM seated"):
            restored.seated.setdefault(player, set()).add(room_id)
        return restored

    def put_room(
        self,
        room_id: str,
        *,
        version: int,
        state: bytes,
        trimmed_through: int,
        expires: float | None,
        deadline: float | None,
        events: Sequence[StoredEvent],
        archive: Archive | None,
    ) -> None:
        with self.file.write() as db:
            db.execute(_PUT_ROOM, (room_id, version, state, trimmed_through, expires, deadline))
            if version == 1:  # a new room: nothing of an earlier one by that id may remain
                for table in _ROOM_TABLES:
                    db.execute(f"DELETE FROM {table} WHERE room = ?", (room_id,))
            if events:
                db.executemany(
                    "INSERT INTO events (room, seq, data) VALUES (?, ?, ?)",
                    [(room_id, event.seq, event.data) for event in events],
                )
            if trimmed_through:
                db.execute(
                    "DELETE FROM events WHERE room = ? AND seq <= ?", (room_id, trimmed_through)
                )
            if archive is not None and archive.records:
                db.executemany(
                    _PUT_RECORD,
                    [(room_id, archive.name, k, v) for k, v in archive.records.items()],
                )

    def drop_rooms(self, room_ids: Sequence[str]) -> None:
        keys = [(room_id,) for room_id in room_ids]
        with self.file.write() as db:
            db.executemany("DELETE FROM rooms WHERE id = ?", keys)
            for table in _ROOM_TABLES:
                db.executemany(f"DELETE FROM {table} WHERE room = ?", keys)

    def set_deadlines(self, deadlines: Mapping[str, float]) -> None:
        with self.file.write() as db:
            db.executemany(
                "UPDATE rooms SET deadline = ? WHERE id = ?",
                [(deadline, room_id) for room_id, deadline in deadlines.items()],
            )

    def shift_deadlines(self, delta: float) -> None:
        with self.file.write() as db:
            db.execute(
                "UPDATE rooms SET deadline = deadline + ? WHERE deadline IS NOT NULL", (delta,)
            )

    def heartbeat(self, at: float) -> None:
        self._clock("heartbeat", at, 0.0)

    def outage(self, ended: float, delta: float) -> None:
        self._clock("outage", ended, delta)

    def _clock(self, name: str, a: float, b: float) -> None:
        with self.file.write() as db:
            db.execute("INSERT OR REPLACE INTO clock (name, a, b) VALUES (?, ?, ?)", (name, a, b))

    def track_room(self, node: str, room_id: str) -> None:
        with self.file.write() as db:
            db.execute("INSERT OR IGNORE INTO tracked (node, room) VALUES (?, ?)", (node, room_id))

    def untrack_room(self, node: str, room_id: str) -> None:
        with self.file.write() as db:
            db.execute("DELETE FROM tracked WHERE node = ? AND room = ?", (node, room_id))

    def drop_nodes(self, nodes: Sequence[str]) -> None:
        with self.file.write() as db:
            db.executemany("DELETE FROM tracked WHERE node = ?", [(node,) for node in nodes])

    def index_seats(self, room_id: str, seated: Sequence[str], left: Sequence[str]) -> None:
        with self.file.write() as db:
            db.executemany(
                "INSERT OR IGNORE INTO seated (player, room) VALUES (?, ?)",
                [(player, room_id) for player in seated],
            )
            db.executemany(
                "DELETE FROM seated WHERE player = ? AND room = ?",
                [(player, room_id) for player in left],
            )

    def close(self) -> None:
        self.file.close()
