"""The room store interface: where rooms live between two steps.

A room is an actor whose whole state is held by the store (docs/architecture.md,
"Invariants"). The store never interprets a room: it keeps opaque ``bytes`` for the state and for
each event, a version for compare-and-set, an event log for resuming clients, a deadline for the
scheduler, and a publish channel for fan-out. The room logic (``step``, ``view``) lives elsewhere.

Two backends implement this one contract and pass one test suite
(``tests/contract/test_store_contract.py``): Redis in production and an in-process memory store for
the embedded single-node default.

Usage pattern of a node (sketch)::

    snap = await store.load_room(room_id)
    new_state, events = step(snap.state, command, await store.now())
    if not await store.commit(room_id, snap.version, new_state, events, next_deadline):
        ...  # somebody else moved first: re-load and re-step

    sub = store.subscriber()          # one per node
    await sub.add(room_id)            # then load the room and send a view
    async for room_id, event in sub:  # every event committed after add() returned
        ...
"""

from __future__ import annotations

import asyncio
import math
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Container, Mapping, Sequence
from dataclasses import dataclass

DEFAULT_MAX_LOG = 5000
"""Events kept per room in the log; a client further behind gets a fresh view instead."""


class StoreError(Exception):
    """The store failed in a way the caller cannot fix by retrying the same call right away."""


class EventOrderError(ValueError):
    """A commit's first event does not follow the room's newest one: the caller's bug (its
    state and the store's disagree on the seq), refused before anything is written."""

    CODE = "EVENTORDER"  # the error code commit.lua replies with


class StoreUnavailable(StoreError):
    """The backend could not be reached (connection refused, reset, timed out).

    A commit that raises this may or may not have been applied: re-load the room before retrying.
    """


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One committed event of a room: its sequence number and its encoded payload.

    ``seq`` is assigned by the caller (the room state carries the counter); within a room the
    seqs are positive and strictly increasing across commits.
    """

    seq: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Archive:
    """Records written once, beside the room's hot state, by the commit that produces them.

    A room keeps finished hands' records (their audits, their summaries) in an archive named
    by its game, so the state every step loads and saves stays small.
    """

    name: str
    records: Mapping[str, bytes]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A room's state as last committed, with the version that a commit must expect."""

    version: int
    state: bytes


class Subscriber(ABC):
    """Live events of the rooms one node watches, multiplexed over one connection.

    Iterating yields ``(room_id, event)`` in commit order per room, for every event committed
    after ``add(room_id)`` returned and before ``remove(room_id)`` was called. Events committed
    while ``add`` was in flight may or may not be delivered, so a node calls ``add`` first and
    then loads the room (or ``events_since``) and drops events whose seq it has already sent.
    A store that knows its node (the Redis store's ``node``) may leave out that node's own
    commits to a room no other node watches (``track_room``): the node delivers those itself
    and fills any gap from ``events_since`` (``server.fanout.hub``). Iteration ends after
    ``close()``.
    """

    @abstractmethod
    async def add(self, room_id: str) -> None:
        """Start receiving the room's events; returns once the subscription is in effect."""

    @abstractmethod
    async def remove(self, room_id: str) -> None:
        """Stop receiving the room's events (events already queued for it are dropped)."""

    @abstractmethod
    async def close(self) -> None:
        """Release the connection; a pending or later iteration ends."""

    @abstractmethod
    async def __anext__(self) -> tuple[str, StoredEvent]:
        """The next event of any watched room."""

    def __aiter__(self) -> AsyncIterator[tuple[str, StoredEvent]]:
        return self


class RoomStore(ABC):
    """Rooms, their event logs, the deadline schedule, leases and the shared clock.

    Every method is safe to call concurrently from many tasks and, for the Redis backend, from
    many nodes. Times are seconds since the epoch as floats, taken from ``now()``.
    """

    @abstractmethod
    async def now(self) -> float:
        """The clock all nodes share (Redis: the TIME command; memory: ``time.time()``).

        Deadlines are absolute times on this clock; never persist a ``monotonic()`` value.
        """

    @abstractmethod
    async def create_room(
        self,
        room_id: str,
        state: bytes,
        events: Sequence[StoredEvent],
        deadline: float | None,
    ) -> bool:
        """Create the room at version 1 with its first events and deadline.

        Returns False (and changes nothing) if the room already exists. The events are logged
        and published exactly as by ``commit``.
        """

    @abstractmethod
    async def load_room(self, room_id: str) -> Snapshot | None:
        """The room's current version and state, or None if there is no such room."""

    @abstractmethod
    async def commit(
        self,
        room_id: str,
        expected_version: int,
        state: bytes,
        events: Sequence[StoredEvent],
        deadline: float | None,
        archive: Archive | None = None,
        ttl: float | None = None,
    ) -> bool:
        """Compare-and-set the room from ``expected_version`` to ``expected_version + 1``.

        Atomically, and only if the stored version is still ``expected_version``: store
        ``state``, append ``events`` to the log (trimmed to the configured length), set the
        room's deadline (or clear it when None), write the ``archive`` records, give the room's
        keys (state, log, the archive named) a time to live of ``ttl`` seconds or none at all
        when None, and publish the events to subscribers.
        Returns False on a conflict, in which case nothing at all has changed.

        Raises ValueError if an event's seq is not greater than every seq already committed for
        the room (checked before anything is written).
        """

    @abstractmethod
    async def archived(self, room_id: str, archive: str) -> dict[str, bytes]:
        """Every record of one archive of the room (``{}`` if none, or the room expired)."""

    @abstractmethod
    async def archived_record(self, room_id: str, archive: str, name: str) -> bytes | None:
        """One record of an archive of the room, or None."""

    @abstractmethod
    async def delete_room(self, room_id: str) -> bool:
        """Remove the room's state, log and deadline; True if the room existed."""

    @abstractmethod
    async def events_since(self, room_id: str, after_seq: int) -> list[StoredEvent] | None:
        """The room's events with ``seq > after_seq``, oldest first.

        Returns None when the log no longer holds all of them (it was trimmed past
        ``after_seq``) or the room does not exist: the caller then sends a fresh view.
        """

    @abstractmethod
    def subscriber(self) -> Subscriber:
        """A new subscriber; a node keeps one and adds/removes the rooms its sockets watch."""

    @abstractmethod
    async def claim_due(self, now: float, limit: int, lease: float) -> list[str]:
        """Atomically take up to ``limit`` rooms whose deadline is ``<= now``, earliest first.

        Each claimed room's deadline moves to ``now + lease``, so concurrent claimers (other
        tasks, other nodes) never get the same room. The claimer then loads the room, steps it
        with a tick and commits, which sets the real next deadline; if it dies first, the room
        comes due again when the lease runs out.
        """

    @abstractmethod
    async def next_deadline(self, room_id: str) -> float | None:
        """The room's pending deadline, or None (for tests and inspection)."""

    @abstractmethod
    async def heartbeat(self, now: float) -> float | None:
        """Record that the service was alive at ``now``; return the previous heartbeat.

        The swap is atomic, so after an outage exactly one caller sees the old value and can
        decide to ``shift_deadlines`` by the downtime.
        """

    @abstractmethod
    async def shift_deadlines(self, delta: float) -> int:
        """Add ``delta`` seconds to every pending deadline; returns how many were shifted.

        Used after a whole-service outage so nobody is booted for the downtime. The deadlines
        inside each room's state are shifted by the room logic when it next ticks.
        """

    @abstractmethod
    async def record_outage(self, ended: float, delta: float) -> None:
        """Remember the last whole-service outage: when the service came back, and the shift.

        Rooms shift the deadlines inside their own state by ``delta`` when they next step,
        once per outage (they remember ``ended``).
        """

    @abstractmethod
    async def last_outage(self) -> tuple[float, float] | None:
        """``(ended, delta)`` of the last recorded outage, or None."""

    @abstractmethod
    async def acquire_lease(self, name: str, holder: str, ttl: float) -> bool:
        """Take the named lease for ``ttl`` seconds, or renew it if ``holder`` already holds it.

        Returns False while another holder's lease is unexpired.
        """

    @abstractmethod
    async def release_lease(self, name: str, holder: str) -> bool:
        """Give the lease up if ``holder`` holds it; True if it was released."""

    @abstractmethod
    async def node_alive(self, node: str, ttl: float) -> bool:
        """Mark server node ``node`` alive for ``ttl`` seconds; False if it was not alive.

        False for a node that tracks rooms means another node reaped it (its liveness lapsed,
        say in an outage): it should ``track_room`` its rooms again and reconnect its seats.
        """

    @abstractmethod
    async def track_room(self, node: str, room_id: str) -> None:
        """Record that ``node`` holds sockets in the room (so its death can be noticed)."""

    @abstractmethod
    async def untrack_room(self, node: str, room_id: str) -> None:
        """``node`` holds no more sockets in the room."""

    @abstractmethod
    async def reap_nodes(self) -> list[tuple[str, list[str]]]:
        """Atomically take every node that tracks rooms but is no longer alive.

        Returns ``(node, rooms)`` pairs; each dead node is returned to exactly one caller, who
        tells each room that the node's connections are gone.
        """

    # Which rooms seat a player (issue 54: "Your games"). Kept beside the rooms, by the room
    # service: a player is added before the commit that seats them and removed after the one
    # that unseats them, so the index is never missing a room; readers check each room it
    # names (a stale entry costs one load, and is removed).

    @abstractmethod
    async def index_seats(self, room_id: str, seated: Sequence[str], left: Sequence[str]) -> None:
        """Add the room to each ``seated`` player's rooms and take it from each ``left`` one's."""

    @abstractmethod
    async def seated_rooms(self, player_id: str) -> list[str]:
        """The rooms the index names for the player (a superset of those seating them)."""

    @abstractmethod
    async def ping(self) -> bool:
        """True if the store answers (readiness)."""

    @abstractmethod
    async def close(self) -> None:
        """Close subscribers and connections; the store is unusable afterwards."""


async def next_watched(
    queue: asyncio.Queue[tuple[str, StoredEvent] | None], watched: Container[str]
) -> tuple[str, StoredEvent]:
    """A subscriber's next item: ``None`` on the queue ends the iteration (for later calls too),
    and an event of a room removed since it was queued is dropped."""
    while True:
        item = await queue.get()
        if item is None:
            queue.put_nowait(None)
            raise StopAsyncIteration
        if item[0] in watched:
            return item


def check_events(events: Sequence[StoredEvent]) -> None:
    """Reject seqs that are not positive, strictly increasing integers (before any write)."""
    prev = 0
    for event in events:
        seq = event.seq
        if type(seq) is not int or seq <= prev:
            raise ValueError(
                f"event seqs must be positive and increasing, got {seq!r} after {prev}"
            )
        if not isinstance(event.data, bytes):
            raise TypeError(f"event data must be bytes, got {type(event.data).__name__}")
        prev = seq


def check_deadline(deadline: float | None) -> None:
    """Reject deadlines that cannot be ordered (NaN, infinities)."""
    if deadline is not None and not math.isfinite(deadline):
        raise ValueError(f"deadline must be finite, got {deadline!r}")


def check_max_log(max_log: int) -> int:
    """The log must keep at least the newest event, or trimming could not be detected."""
    if max_log < 1:
        raise ValueError(f"max_log must be at least 1, got {max_log}")
    return max_log
