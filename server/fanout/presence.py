"""Which server nodes are alive, so a dead node's sockets stop counting as present.

A seat is away only when none of its player's sockets is open (docs/architecture.md, "Clocks,
leaving, bots"), and each room keeps the ids of those sockets (``<node>/<id>``). A node that is
killed cannot say its sockets closed, so every node renews a short liveness key and records
the rooms where it holds sockets; the first node to find a lapsed one drops its connections
from each of its rooms (``DropNode``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from server.core.room.commands import Connect, DropNode, RoomError
from server.fanout.hub import Hub
from server.play.rooms import RoomService

log = logging.getLogger(__name__)


class Presence:
    def __init__(self, node_id: str, rooms: RoomService, hub: Hub, ttl: float = 10.0) -> None:
        """``ttl``: a node silent this long is dead; well above a GC pause or a slow reply."""
        self.node_id = node_id
        self.ttl = ttl
        self.renew_every = ttl / 5
        self.rooms = rooms
        self.hub = hub
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="presence")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _loop(self) -> None:
        store = self.rooms.store
        reaped_at = 0.0
        loop = asyncio.get_running_loop()
        while True:
            try:
                if not await store.node_alive(self.node_id, self.ttl) and self.hub.watchers:
                    await self._announce_again()
                if loop.time() - reaped_at >= self.ttl / 2:
                    reaped_at = loop.time()
                    for node, room_ids in await store.reap_nodes():
                        if node == self.node_id:
                            continue  # reaped while cut off: _announce_again restores it
                        log.info(
                            "node %s is gone: dropping its sockets from %d rooms",
                            node,
                            len(room_ids),
                        )
                        for room_id in room_ids:
                            with contextlib.suppress(RoomError):  # the room is gone
                                await self.rooms.apply(room_id, DropNode(node))
                            # Its rooms' commits need not be published to it any more.
                            await store.untrack_room(node, room_id)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # the store is down: the outage is logged by the scheduler
                log.debug("presence pass failed: %s", e)
            await asyncio.sleep(self.renew_every)

    async def _announce_again(self) -> None:
        """Another node took this one for dead: record its rooms and seats again."""
        for room_id, conns in list(self.hub.watchers.items()):
            await self.rooms.store.track_room(self.node_id, room_id)
            for conn in list(conns):
                if conn.seat is not None and conn.identity is not None:
                    await self.rooms.apply(room_id, Connect(conn.identity.player, conn.id))
