"""The room service: the thin I/O shell around the pure room state machine.

Each transition is load (version v) → ``step`` → commit v+1 with its events and next deadline
in one compare-and-set; on conflict the step is re-run on the fresh state. Events are published
by the store only after the commit, so nobody sees a move that is not stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgpack

from protocol.errors import ERRORS
from server import metrics
from server.bot_pool import BotPool, random_move
from server.outage_log import OutageLog
from server.room.game_view import game_view
from server.room.machine import (
    BotAct,
    Command,
    Event,
    RatingsPosted,
    RoomError,
    ShiftClocks,
    Tick,
    deciding_seats,
    new_room,
    next_deadline,
    step,
)
from server.room.state import RoomState, TableOptions
from server.store import RoomStore, StoredEvent, StoreUnavailable

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 25
TICK_LEASE = 10.0
HEARTBEAT_EVERY = 1.0
OUTAGE_GRACE = 3.0
RATING_RETRY = 2.0  # beyond the downtime itself, a few seconds to reconnect after an outage


def encode_event(event: Event) -> bytes:
    return msgpack.packb([event.audience, event.type, event.data], use_bin_type=True)


def decode_event(data: bytes) -> Event:
    audience, kind, fields = msgpack.unpackb(data, raw=False)
    return Event(audience, kind, fields)


def new_room_code() -> str:
    """Unguessable: 72 random bits, URL-safe."""
    return secrets.token_urlsafe(9)


class RoomService:
    def __init__(
        self,
        store: RoomStore,
        bots: BotPool,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.bots = bots
        self.clock = clock  # wall clock of NTP-synchronized nodes: never a persisted monotonic()
        self.on_commit: Callable[[str, float | None], None] | None = None
        self.outage: tuple[float, float] | None = None  # the last outage (ended, delta)
        # Posts a finished rated game to the league: per-seat rating changes, or None to retry.
        self.post_ratings: (
            Callable[[RoomState], Awaitable[list[dict[str, Any] | None] | None]] | None
        ) = None

    def _catch_up(self, state: RoomState, now: float) -> tuple[RoomState, list[Event]]:
        """Give the room back the last outage's downtime before anything else happens."""
        if self.outage is None or state.outage_seen >= self.outage[0]:
            return state, []
        return step(state, ShiftClocks(*self.outage), now)

    async def create(
        self, *, kind: str, host: str | None, host_name: str | None, options: TableOptions
    ) -> RoomState:
        while True:
            room_id = new_room_code()
            state, events = new_room(
                room_id,
                kind=kind,
                host=host,
                host_name=host_name,
                options=options,
                seed=secrets.token_bytes(32),
                now=self.clock(),
            )
            stored = [StoredEvent(k + 1, encode_event(e)) for k, e in enumerate(events)]
            if await self.store.create_room(
                room_id, state.to_bytes(), stored, next_deadline(state)
            ):
                return state

    async def load(self, room_id: str) -> RoomState | None:
        snap = await self.store.load_room(room_id)
        return RoomState.from_bytes(snap.state) if snap is not None else None

    async def apply(self, room_id: str, command: Command) -> tuple[RoomState, list[Event]]:
        """Run one command to a committed state; RoomError if the room refuses it."""
        for _ in range(MAX_ATTEMPTS):
            snap = await self.store.load_room(room_id)
            if snap is None:
                raise RoomError("room_not_found", "No room has that code.")
            state = RoomState.from_bytes(snap.state)
            now = self.clock()
            shifted, early = self._catch_up(state, now)
            new, events = step(shifted, command, now)
            events = early + events
            data = new.to_bytes()
            if not events and data == snap.state:
                return new, events  # nothing changed: nothing to store
            if await self._commit(room_id, snap.version, state.seq, new, events, data):
                return new, events
        raise RoomError("busy", "The room is busy; try again.")

    async def _commit(
        self,
        room_id: str,
        version: int,
        seq: int,
        new: RoomState,
        events: list[Event],
        data: bytes | None = None,
    ) -> bool:
        stored = [StoredEvent(seq + k + 1, encode_event(e)) for k, e in enumerate(events)]
        deadline = next_deadline(new)
        state = data if data is not None else new.to_bytes()
        try:
            ok = await self.store.commit(room_id, version, state, stored, deadline)
        except StoreUnavailable as e:
            metrics.STORE_ERRORS.inc()
            # The script may have run and only its reply been lost (store/base.py).
            raise RoomError("outcome_unknown", ERRORS["outcome_unknown"]) from e
        except Exception:
            metrics.STORE_ERRORS.inc()
            raise
        (metrics.COMMITS if ok else metrics.CONFLICTS).inc()
        if ok and self.on_commit is not None:
            self.on_commit(room_id, deadline)
        return ok

    async def tick(self, room_id: str) -> None:
        """Fire whatever is due in the room: bots' moves, then clocks and the next deal."""
        metrics.TICKS.inc()
        for _ in range(MAX_ATTEMPTS):
            snap = await self.store.load_room(room_id)
            if snap is None:
                return
            state = RoomState.from_bytes(snap.state)
            start_seq = state.seq
            now = self.clock()
            state, events = self._catch_up(state, now)
            # Bots first: a bot whose think time is over moves, then the clocks run.
            for _ in range(8):
                moved = False
                for i in deciding_seats(state):
                    seat = state.seats[i]
                    if seat is None or seat.bot_due is None or seat.bot_due > now:
                        continue
                    view = game_view(state.game, i)  # type: ignore[arg-type]
                    seed = _bot_seed(state, i)
                    action, value = await self.bots.decide(view, seat.bot or "random", seed)
                    try:
                        state, evs = step(state, BotAct(i, action, value), now)
                    except RoomError:
                        action, value = random_move(view, seed)
                        state, evs = step(state, BotAct(i, action, value), now)
                    events += evs
                    moved = True
                    break
                if not moved:
                    break
            if state.rating_due is not None and state.rating_due <= now and self.post_ratings:
                changes = await self.post_ratings(state)
                posted = RatingsPosted(
                    tuple(changes) if changes is not None else None, retry_at=now + RATING_RETRY
                )
                state, evs = step(state, posted, now)
                events += evs
            state, evs = step(state, Tick(), now)
            events += evs
            # Commit even with no events: the claim moved the deadline, this sets the real one.
            if await self._commit(room_id, snap.version, start_seq, state, events):
                return
        log.warning("room %s: tick gave up after %d conflicts", room_id, MAX_ATTEMPTS)


def _bot_seed(state: RoomState, seat: int) -> int:
    """Bots are deterministic per position, so a retried tick makes the same move."""
    digest = hashlib.sha256(state.seed + state.seq.to_bytes(8, "big") + bytes((seat,))).digest()
    return int.from_bytes(digest[:8], "big")


class Scheduler:
    """Every node claims due rooms from the store's deadline set and ticks them.

    Claims are atomic with a lease, so two nodes never tick the same room at once, and a node
    that dies mid-tick only delays the room until the lease ends. A commit whose next deadline
    is already due is ticked at once by the node that made it (no polling delay for bots).
    """

    def __init__(self, rooms: RoomService, interval: float, outage_threshold: float = 5.0) -> None:
        self.rooms = rooms
        self.interval = interval
        self.outage_threshold = outage_threshold  # a heartbeat gap longer than this is an outage
        self._task: asyncio.Task[None] | None = None
        self._running: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()
        self._wake = asyncio.Event()
        rooms.on_commit = self._committed

    def _committed(self, room_id: str, deadline: float | None) -> None:
        if deadline is not None and deadline <= self.rooms.clock() + self.interval:
            self._wake.set()

    async def start(self) -> None:
        await self._recover_downtime()
        self._task = asyncio.create_task(self._loop(), name="scheduler")

    async def stop(self) -> None:
        tasks = [t for t in (self._task, *self._running.values()) if t is not None]
        for task in tasks:
            # A tick cut short loses nothing: it commits all or nothing, and its claim expires.
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _recover_downtime(self) -> None:
        """After a whole-service outage, push deadlines back so nobody is booted for it.

        The heartbeat swap is atomic, so exactly one starting node sees the gap; it shifts the
        deadline set and records the outage, which every room applies to its own clocks the
        next time it steps (on any node).
        """
        store = self.rooms.store
        now = self.rooms.clock()
        last = await store.heartbeat(now)
        if last is not None and now - last > self.outage_threshold:
            shift = now - last + OUTAGE_GRACE
            moved = await store.shift_deadlines(shift)
            await store.record_outage(now, shift)
            log.warning("service was down %.1fs: pushed %d deadlines back", now - last, moved)
        self.rooms.outage = await store.last_outage()

    async def _loop(self) -> None:
        store = self.rooms.store
        beat = 0.0
        outage = OutageLog(log, "scheduler pass (store unreachable?)")
        while True:
            try:
                now = self.rooms.clock()
                if now - beat > HEARTBEAT_EVERY:
                    await store.heartbeat(now)
                    beat = now
                due = await store.claim_due(now, 64, TICK_LEASE)
                for room_id in due:
                    if room_id in self._running:
                        # Claimed while its tick runs here: the claim moved its deadline to the
                        # lease, so tick it again right after, or it would wait out the lease.
                        self._again.add(room_id)
                    else:
                        self._running[room_id] = asyncio.create_task(self._tick(room_id))
                outage.succeeded()
            except asyncio.CancelledError:
                raise
            except Exception:
                outage.failed()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)
            self._wake.clear()

    async def _tick(self, room_id: str) -> None:
        try:
            while True:
                self._again.discard(room_id)
                await self.rooms.tick(room_id)
                if room_id not in self._again:
                    break
        except Exception:
            log.exception("tick of room %s failed", room_id)
        finally:
            self._running.pop(room_id, None)


def public_info(state: RoomState) -> dict[str, Any]:
    """What anyone with the code may see before joining (HTTP room info)."""
    return {
        "room": state.id,
        "kind": state.kind,
        "status": state.status,
        "options": state.options.public(),
        "seats": [None if s is None else {"name": s.name, "bot": s.is_bot} for s in state.seats],
        "spectators": len(state.spectators),
        "game_number": state.game_number,
        "scores": state.game.scores if state.game is not None else None,
    }
