"""Live quick play wired into a node: the queue and the matchmaker.

The queue lives in the league store (Redis in production), so any node serves any queued
player; the ratings it matches on are read from the store of record. Exactly one matchmaker
acts at a time (a lease). A node only keeps which of its own connections are queued, and picks
up their table assignments.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from matchmaker.matching import MatchConfig, QueueEntry, queue_status
from matchmaker.rooms_bridge import RoomsBridge
from matchmaker.service import Matchmaker
from server.core.ratings import display_rating
from server.ops.outage_log import OutageLog
from server.ports import Member, NodeServices
from server.record.store import RecordStore
from server.store.league import LeagueStore

log = logging.getLogger(__name__)

PICKUP_EVERY = 0.25
QUEUE_TTL = 30.0  # a queued player whose node stopped refreshing it is dropped after this


class QuickPlay:
    def __init__(self, node: NodeServices, league: LeagueStore, records: RecordStore) -> None:
        self.node = node
        settings = node.settings
        self.league = league
        self.records = records  # the ratings the queue matches on
        self.bridge = RoomsBridge(node.rooms, self.league, clocks=settings.clocks)
        self.config = MatchConfig(bot_fill_after=settings.bot_fill_after)
        self.matchmaker = (
            Matchmaker(
                self.league,
                node.store,
                self.bridge.create_table,
                config=self.config,
                node_id=settings.node_id,
                clock=node.rooms.clock,
                abandon_table=self.bridge.abandon_table,
                queue_ttl=QUEUE_TTL,
            )
            if settings.matchmaker
            else None
        )
        self.queued: dict[str, tuple[Member, QueueEntry]] = {}  # player id → its connection
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self._tasks.append(asyncio.create_task(self._pickup(), name="queue-pickup"))
        if self.matchmaker is not None:
            self._tasks.append(asyncio.create_task(self.matchmaker.run(), name="matchmaker"))

    async def stop(self) -> None:
        if self.matchmaker is not None:
            with contextlib.suppress(Exception):
                await self.matchmaker.stop()
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for player in list(self.queued):
            with contextlib.suppress(Exception):
                await self.league.dequeue(player)
        await self.league.close()

    # -- the queue -------------------------------------------------------------------------

    async def join(self, conn: Member, target: int) -> dict[str, Any]:
        assert conn.identity is not None
        player, name = conn.identity.player, conn.identity.name
        now = self.node.rooms.clock()
        rating = (await self.records.ratings([player]))[player]
        entry = QueueEntry(player, display_rating(rating.rating), 50 if target == 50 else 100, now)
        if not await self.league.enqueue(entry, name, now=now):
            # A table was already found for this player: go there instead.
            room = await self.league.take_assignment(player)
            if room is not None:
                return {"matched": await conn.enter(room, resume_from=None)}
        self.queued[player] = (conn, entry)
        return {"queued": True, "status": self.status(entry, now)}

    async def leave(self, conn: Member) -> bool:
        if conn.identity is None:
            return False
        player = conn.identity.player
        mine = self.queued.get(player)
        if mine is None or mine[0] is not conn:
            return False
        del self.queued[player]
        return await self.league.dequeue(player)

    def status(self, entry: QueueEntry, now: float) -> dict[str, Any]:
        s = queue_status(entry, now, self.config)
        return {
            "target": s.target,
            "rating": entry.display,
            "waited": round(s.waited, 1),
            "window": s.window,
            "low": s.low,
            "high": s.high,
            "bots_in": round(s.bots_in, 1),
        }

    async def _pickup(self) -> None:
        """Send this node's queued players to the tables found for them; show them the search."""
        last_touch = 0.0
        outage = OutageLog(log, "quick-play queue pickup (store unreachable?)")
        while True:
            await asyncio.sleep(PICKUP_EVERY)
            if not self.queued:
                continue
            try:
                now = self.node.rooms.clock()
                players = list(self.queued)
                if now - last_touch > QUEUE_TTL / 3:
                    await self.league.touch_queue(players, now)
                    last_touch = now
                found = await self.league.take_assignments(players)
                for player, (conn, entry) in list(self.queued.items()):
                    room = found.get(player)
                    if room is None:
                        conn.push({"type": "queue", "status": self.status(entry, now)})
                        continue
                    del self.queued[player]
                    reply = await conn.enter(room, resume_from=None)
                    conn.push({"type": "matched", **reply})
                outage.succeeded()
            except asyncio.CancelledError:
                raise
            except Exception:
                outage.failed()
