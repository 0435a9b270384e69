"""What the memory stores write through, so that the embedded node's hot state outlives it.

A memory store calls its journal in the same call as each change, before it changes its own
dicts: a write the journal refuses (it raises) leaves the store as it was. The journal is read
back once, when the store is made. The base classes here keep nothing (``MemoryRoomStore()``
in tests, ``memory://``); ``server.store.sqlite`` keeps a SQLite file in the data folder.

Rooms (state, version, log, archives, expiry, deadline), the heartbeat, the last outage,
which node tracks which rooms and which rooms seat which player are journaled; leases, node
liveness and subscribers are not (a restarted node is a new node, and the old one, never alive
again, is reaped from its rooms).
Sessions and the revocation log are journaled; throttles and the quick-play queue are not
(they are ephemeral: a restart forgets some attempts and empties the queue).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from server.store.rooms import Archive, StoredEvent


@dataclass(slots=True)
class RoomRecord:
    """One room as the memory store holds it."""

    version: int
    state: bytes
    log: list[StoredEvent] = field(default_factory=list)
    # Highest seq ever dropped from the log: a reader asking from below it has missed events.
    trimmed_through: int = 0
    last_seq: int = 0
    archives: dict[str, dict[str, bytes]] = field(default_factory=dict)
    expires: float | None = None  # wall-clock time the room's keys lapse, None: never


@dataclass(slots=True)
class RestoredRooms:
    """What a room journal held when it was opened."""

    rooms: dict[str, RoomRecord] = field(default_factory=dict)
    deadlines: dict[str, float] = field(default_factory=dict)
    heartbeat: float | None = None
    outage: tuple[float, float] | None = None
    node_rooms: dict[str, set[str]] = field(default_factory=dict)
    seated: dict[str, set[str]] = field(default_factory=dict)  # player -> rooms (the index)


class RoomJournal:
    """The room store's journal; this base keeps nothing. Each method is one transaction."""

    def restore(self) -> RestoredRooms:
        """Everything journaled, rooms whose time to live ran out left out."""
        return RestoredRooms()

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
        """A room created (version 1) or committed: its new version, state, trim mark, expiry
        and deadline; ``events`` appended to its log, which drops every seq up to the mark;
        the ``archive`` records written."""

    def drop_rooms(self, room_ids: Sequence[str]) -> None:
        """Rooms deleted or expired: their state, log, archives and deadline."""

    def set_deadlines(self, deadlines: Mapping[str, float]) -> None:
        """Rooms' deadlines moved (a claim's lease)."""

    def shift_deadlines(self, delta: float) -> None:
        """Every pending deadline moved by ``delta``."""

    def heartbeat(self, at: float) -> None:
        """The service's latest heartbeat."""

    def outage(self, ended: float, delta: float) -> None:
        """The last whole-service outage."""

    def track_room(self, node: str, room_id: str) -> None:
        """``node`` holds sockets in the room."""

    def untrack_room(self, node: str, room_id: str) -> None:
        """``node`` holds no more sockets in the room."""

    def drop_nodes(self, nodes: Sequence[str]) -> None:
        """Reaped nodes: none of their rooms is tracked any more."""

    def index_seats(self, room_id: str, seated: Sequence[str], left: Sequence[str]) -> None:
        """The players' index of rooms (``RoomStore.index_seats``)."""

    def close(self) -> None:
        """Release the journal; it is unusable afterwards."""


@dataclass(slots=True)
class RestoredSessions:
    """What a session journal held when it was opened (expired sessions left out)."""

    sessions: dict[str, tuple[str, float]] = field(default_factory=dict)  # digest -> (player, exp)
    revoked: list[str] = field(default_factory=list)  # the revocation log's latest entries
    revoked_count: int = 0  # entries ever appended: the log's position


class SessionJournal:
    """The session store's journal; this base keeps nothing. Each method is one transaction."""

    def restore(self) -> RestoredSessions:
        return RestoredSessions()

    def put_session(self, token_digest: str, player_id: str, expires_at: float) -> None:
        """A session created or renewed."""

    def drop_sessions(self, token_digests: Sequence[str], logged_after: int | None) -> None:
        """Sessions ended. Revoked ones (``logged_after`` not None) are appended to the
        revocation log at positions ``logged_after + 1`` on; expired ones are not logged."""

    def close(self) -> None:
        """Release the journal; it is unusable afterwards."""
