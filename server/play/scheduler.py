"""The scheduler: every node claims due rooms from the store's deadline set and ticks them."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from server.ops.outage_log import OutageLog
from server.play.rooms import RoomService
from server.store import StoreError

log = logging.getLogger(__name__)

TICK_LEASE = 10.0
HEARTBEAT_EVERY = 1.0
OUTAGE_GRACE = 3.0  # beyond the downtime itself, a few seconds to reconnect after an outage


class DeadlineAlarm:
    """Rings when a commit's next deadline falls before the scheduler's next pass, so the room
    is claimed at once (a bot's move waits for no polling interval).

    Made before the room service and the scheduler: the service calls ``committed`` after each
    commit, the scheduler waits on ``rung``.
    """

    def __init__(self, clock: Callable[[], float], interval: float) -> None:
        self.clock = clock
        self.interval = interval  # seconds between two passes of the scheduler
        self.rung = asyncio.Event()

    def committed(self, room_id: str, deadline: float | None) -> None:
        if deadline is not None and deadline <= self.clock() + self.interval:
            self.rung.set()


class Scheduler:
    """Every node claims due rooms from the store's deadline set and ticks them.

    Claims are atomic with a lease, so two nodes never tick the same room at once, and a node
    that dies mid-tick only delays the room until the lease ends. A commit whose next deadline
    is already due is ticked at once by the node that made it (no polling delay for bots).
    """

    def __init__(
        self, rooms: RoomService, alarm: DeadlineAlarm, outage_threshold: float = 5.0
    ) -> None:
        self.rooms = rooms
        self.alarm = alarm
        self.interval = alarm.interval
        self.outage_threshold = outage_threshold  # a heartbeat gap longer than this is an outage
        self._task: asyncio.Task[None] | None = None
        self._beat: asyncio.Task[None] | None = None
        self._running: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()

    async def start(self) -> None:
        """Claim and tick due rooms from now on (after ``recover_downtime``)."""
        self._task = asyncio.create_task(self._loop(), name="scheduler")
        # Its own loop: the heartbeat's key lives on one shard, whose failover must not hold
        # up the claims of rooms on the others.
        self._beat = asyncio.create_task(self._beat_loop(), name="scheduler-heartbeat")

    async def stop(self) -> None:
        tasks = [t for t in (self._task, self._beat, *self._running.values()) if t is not None]
        for task in tasks:
            # A tick cut short loses nothing: it commits all or nothing, and its claim expires.
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def recover_downtime(self) -> None:
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

    async def _loop(self) -> None:
        store = self.rooms.store
        outage = OutageLog(log, "scheduler pass (store unreachable?)")
        while True:
            try:
                now = self.rooms.clock()
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
                await asyncio.wait_for(self.alarm.rung.wait(), self.interval)
            self.alarm.rung.clear()

    async def _beat_loop(self) -> None:
        """The service's heartbeat (``recover_downtime`` reads its gaps), every second."""
        store = self.rooms.store
        outage = OutageLog(log, "scheduler heartbeat (store unreachable?)")
        while True:
            try:
                await store.heartbeat(self.rooms.clock())
                outage.succeeded()
            except asyncio.CancelledError:
                raise
            except Exception:
                outage.failed()
            await asyncio.sleep(HEARTBEAT_EVERY)

    async def _tick(self, room_id: str) -> None:
        try:
            while True:
                self._again.discard(room_id)
                await self.rooms.tick(room_id)
                if room_id not in self._again:
                    break
        except StoreError as e:  # an outage: its start and end are logged by the loop
            log.warning("tick of room %s failed: %s", room_id, e)
        except Exception:
            log.exception("tick of room %s failed", room_id)
        finally:
            self._running.pop(room_id, None)
