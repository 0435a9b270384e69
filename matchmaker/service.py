"""The quick-play matchmaker: one pass at a time, under a lease, seating tables atomically.

Each pass (``step``), on whichever node holds the ``matchmaker`` lease:

1. renew the lease (or, if another node holds it, do nothing);
2. abandon the rooms a dead matchmaker created but never seated (the pending-table journal),
   and purge the queue entries no node has vouched for lately (``queue_ttl``);
3. read the queue, ``find_tables`` (pure, ``matching.py``);
4. for each table, ``create_table(table, names)`` makes the rated room with its players and
   bots seated and returns the room id, which is noted in the journal;
5. ``seat_tables`` atomically: a table whose players are all still queued (with the entries
   this pass decided on) is seated — they leave the queue and get the room as their
   assignment; any other table's room is handed to ``abandon_table`` (it must not keep a
   phantom player), then its note is dropped. A journalled room older than ``stale_after``
   is first marked, so it can no longer be seated, then abandoned the same way.

Safety does not rest on the lease: ``seat_tables`` is atomic and conditional, so even two
matchmakers acting at once (a lease that ran out mid-pass) never seat a player twice; the
lease only keeps them from wasting rooms. Liveness does: a node that dies stops renewing and
another takes over when the lease's TTL runs out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from matchmaker.matching import DEFAULT_CONFIG, MatchConfig, Table, find_tables
from server.ops.outage_log import OutageLog
from server.store.league import LeagueStore

log = logging.getLogger(__name__)

LEASE_NAME = "matchmaker"

CreateTable = Callable[[Table, Mapping[str, str]], Awaitable[str]]
"""Make a rated room for ``table`` (its players named by the mapping, bots in the empty seats)
and return its id."""
AbandonTable = Callable[[str], Awaitable[None]]
"""Get rid of a room created for a table that could not be seated (idempotent)."""


class LeaseHolder(Protocol):
    """What the matchmaker needs of a store for its lease (``RoomStore`` has it)."""

    async def acquire_lease(self, name: str, holder: str, ttl: float) -> bool: ...

    async def release_lease(self, name: str, holder: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class SeatedTable:
    room_id: str
    table: Table


def default_node_id() -> str:
    return f"{socket.gethostname()}-{secrets.token_hex(3)}"


class Matchmaker:
    """Runs ``step`` every ``interval`` seconds while ``run`` runs; see the module docstring."""

    def __init__(
        self,
        league: LeagueStore,
        leases: LeaseHolder,
        create_table: CreateTable,
        config: MatchConfig = DEFAULT_CONFIG,
        node_id: str | None = None,
        clock: Callable[[], float] = time.time,
        *,
        abandon_table: AbandonTable | None = None,
        interval: float = 0.5,
        lease_ttl: float = 5.0,
        queue_ttl: float | None = None,
        stale_after: float = 60.0,
    ) -> None:
        """
        ``clock`` is the nodes' shared clock (the one queue entries' ``joined_at`` is on).
        ``lease_ttl`` must be well above ``interval``: the lease is renewed once per pass.
        ``queue_ttl``: purge queue entries not touched for that long (None: never); nodes must
        then ``touch_queue`` their queued players more often than that.
        ``stale_after``: a journalled room older than this was left by a dead matchmaker (a
        live one seats or abandons its rooms within one pass).
        """
        if interval <= 0 or lease_ttl <= interval or stale_after <= 0:
            raise ValueError("need 0 < interval < lease_ttl and stale_after > 0")
        if queue_ttl is not None and queue_ttl <= 0:
            raise ValueError("queue_ttl must be positive")
        self.league = league
        self.leases = leases
        self.create_table = create_table
        self.abandon_table = abandon_table
        self.config = config
        self.node_id = node_id or default_node_id()
        self.clock = clock
        self.interval = interval
        self.lease_ttl = lease_ttl
        self.queue_ttl = queue_ttl
        self.stale_after = stale_after
        self.leader = False  # held the lease at the last pass
        self._stopping = asyncio.Event()
        self._running = False

    # One pass ---------------------------------------------------------------------------------

    async def step(self, now: float | None = None) -> list[SeatedTable]:
        """One pass (see the module docstring); the tables seated by it."""
        now = self.clock() if now is None else now
        self.leader = await self.leases.acquire_lease(LEASE_NAME, self.node_id, self.lease_ttl)
        if not self.leader:
            return []
        await self._clean_up(now)
        entries = await self.league.queue_entries()
        tables = find_tables(entries, now, self.config).tables
        if not tables:
            return []
        names = await self.league.queue_names(pid for t in tables for pid in t.player_ids)
        rooms = await asyncio.gather(
            *(
                self._create(t, {p: names[p] for p in t.player_ids if p in names}, now)
                for t in tables
            )
        )
        made = [(room, t) for room, t in zip(rooms, tables, strict=True) if room is not None]
        if not made:
            return []
        seated = await self.league.seat_tables(
            [(room, t.player_ids) for room, t in made],
            expected={e.player_id: e for e in entries},
        )
        done: list[SeatedTable] = []
        for (room, table), ok in zip(made, seated, strict=True):
            if ok:
                done.append(SeatedTable(room, table))
            else:
                log.info("matchmaker: table %s lost a player before seating; abandoning", room)
                await self._abandon(room)
        return done

    async def _create(self, table: Table, names: Mapping[str, str], now: float) -> str | None:
        try:
            room = await self.create_table(table, names)
        except Exception:
            # The players stay queued and are matched again next pass.
            log.exception("matchmaker: creating a table for %s failed", table.player_ids)
            return None
        try:
            await self.league.note_table(room, now)
        except Exception:
            log.exception("matchmaker: cannot journal room %s; abandoning it", room)
            with contextlib.suppress(Exception):
                if self.abandon_table is not None:
                    await self.abandon_table(room)
            return None
        return room

    async def _abandon(self, room: str) -> None:
        """Abandon the room, then drop its note. If abandoning fails the note stays, so a
        later pass (this node's or another's) finds it stale and tries again."""
        if self.abandon_table is None:
            log.warning("matchmaker: room %s cannot be abandoned (no abandon_table)", room)
        else:
            try:
                await self.abandon_table(room)
            except Exception:
                log.exception("matchmaker: abandoning room %s failed; will retry", room)
                return
        await self.league.forget_table(room)

    async def _clean_up(self, now: float) -> None:
        # Marked before abandoning, so a slow (not dead) creator can no longer seat them.
        for room in await self.league.take_stale_tables(now - self.stale_after):
            log.warning("matchmaker: abandoning room %s left unseated by a dead matchmaker", room)
            await self._abandon(room)
        if self.queue_ttl is not None:
            gone = await self.league.purge_queue(now - self.queue_ttl)
            if gone:
                log.info("matchmaker: purged %d queue entries nobody vouched for", len(gone))

    # The loop ---------------------------------------------------------------------------------

    async def run(self) -> None:
        """Pass after pass until ``stop``; gives the lease up on the way out."""
        self._running = True
        self._stopping.clear()
        outage = OutageLog(log, "matchmaker pass (store unreachable?)")
        try:
            while not self._stopping.is_set():
                try:
                    await self.step()
                    outage.succeeded()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    outage.failed()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), self.interval)
        finally:
            self._running = False
            await self._release()

    async def stop(self) -> None:
        """Ask ``run`` to finish after its current pass; releases the lease if not running."""
        self._stopping.set()
        if not self._running:
            await self._release()

    async def _release(self) -> None:
        if self.leader:
            self.leader = False
            with contextlib.suppress(Exception):  # it expires on its own anyway
                await self.leases.release_lease(LEASE_NAME, self.node_id)
