"""Fan-out from Redis: sharded pub/sub (SSUBSCRIBE), one connection per shard owner.

Each room's commits are SPUBLISHed on the room's channel, in the room's slot (see
``keys``). A node subscribes only to the rooms its sockets watch, each on the server that
owns the room's slot: on one Redis that is one connection; on a cluster, one connection
("link") per primary that owns a watched room, each with its own reader task, all feeding one
queue.

Gaps are closed from the room's log. Every (re)subscription confirmation of a room already
being watched (redis-py reconnects and re-subscribes after a drop; a room moved to another
link after a failover or slot migration) makes the subscriber fetch what was committed
meanwhile (``events_since`` from the last seq it delivered), holding back live messages of that
room until the backfill is out, so the stream of events per room stays gap-free and in order.
Only if the log was trimmed past the gap (thousands of events of one room during the outage)
are events lost, and that is logged.

On a cluster, a link that fails (its primary died) or is told the slot moved (``MOVED``, or a
server-sent ``sunsubscribe``) asks the cluster client for the slot map again and moves each of
its rooms whose slot has a new owner to that owner's link (a slot with no owner yet, mid-failover,
waits for the link's next failure to look again).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any, Protocol

import msgpack
import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError, SlotNotCoveredError

from server.ops.outage_log import OutageLog
from server.store.redis.client.connect import Client, store_errors
from server.store.rooms import (
    StoredEvent,
    StoreError,
    StoreUnavailable,
    Subscriber,
    next_watched,
)


class SubscribedStore(Protocol):
    """What the subscriber uses of ``server.store.redis.rooms.RedisRoomStore``."""

    _client: Client
    _subscribers: set[RedisSubscriber]
    node: str | None

    def channel(self, room_id: str) -> str: ...

    async def watch_room(self, node: str, room_id: str) -> None: ...

    async def events_since(self, room_id: str, after_seq: int) -> list[StoredEvent] | None: ...

    async def _last_seq(self, room_id: str) -> int: ...


log = logging.getLogger(__name__)

_SUBSCRIBE_TIMEOUT = 10.0
"""Seconds add() waits for Redis to confirm an SSUBSCRIBE."""

_SINGLE = "single"
"""The name of the only link on one Redis server."""


def _decode_events(payload: bytes) -> list[StoredEvent]:
    return [StoredEvent(seq, data) for seq, data in msgpack.unpackb(payload)]


class _Link:
    """One pub/sub connection to one server, and the task reading it."""

    def __init__(self, name: str, pubsub: PubSub, client: aioredis.Redis | None) -> None:
        self.name = name
        self.pubsub = pubsub
        self.client = client  # a client of our own (cluster links), closed with the link
        self.reader: asyncio.Task[None] | None = None
        self.channels: set[bytes] = set()

    async def close(self) -> None:
        if self.reader is not None and self.reader is not asyncio.current_task():
            self.reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.reader
        with contextlib.suppress(RedisError, OSError):
            await self.pubsub.aclose()
        if self.client is not None:
            with contextlib.suppress(RedisError, OSError):
                await self.client.aclose()


class RedisSubscriber(Subscriber):
    """The rooms one node watches, over one link per server that owns some of them."""

    PING_AFTER = 5.0
    """Seconds of silence after which a reader pings; twice that without a reply and it
    drops the connection, since a half-open TCP connection would otherwise block forever."""

    def __init__(self, store: SubscribedStore) -> None:
        self._store = store
        self._cluster: RedisCluster | None = (
            store._client if isinstance(store._client, RedisCluster) else None
        )
        self._links: dict[str, _Link] = {}
        self._link_of: dict[bytes, _Link] = {}  # channel -> the link it is subscribed on
        self._rooms: dict[bytes, str] = {}  # channel -> room id, for rooms added
        self._watched: set[str] = set()  # room ids added and not removed
        self._pending: dict[bytes, asyncio.Future[None]] = {}  # SSUBSCRIBEs not yet confirmed
        self._last: dict[str, int] = {}  # newest seq delivered per room (dedupe, backfill)
        self._baseline: dict[str, int] = {}  # room's newest seq when add() confirmed
        self._held: dict[str, list[StoredEvent]] = {}  # live events held during a backfill
        self._backfills: dict[str, asyncio.Task[None]] = {}
        self._refill: set[str] = set()
        self._queue: asyncio.Queue[tuple[str, StoredEvent] | None] = asyncio.Queue()
        self._rehoming: asyncio.Lock = asyncio.Lock()
        self._closed = False

    # Public API --------------------------------------------------------------------------------

    async def add(self, room_id: str) -> None:
        if self._closed:
            raise RuntimeError("subscriber is closed")
        channel = self._store.channel(room_id).encode()
        pending = self._pending.get(channel)
        if pending is not None:  # another task is adding the same room: wait with it
            await asyncio.wait_for(asyncio.shield(pending), _SUBSCRIBE_TIMEOUT)
            return
        if channel in self._rooms:
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending[channel] = future
        self._rooms[channel] = room_id
        self._watched.add(room_id)
        try:
            with store_errors():
                await self._subscribe(channel)
            await asyncio.wait_for(asyncio.shield(future), _SUBSCRIBE_TIMEOUT)
            # Where a backfill after a reconnect starts if nothing was delivered yet.
            self._baseline[room_id] = await self._store._last_seq(room_id)
        except BaseException:
            if self._pending.get(channel) is future:
                del self._pending[channel]
            if not future.done():
                future.cancel()
            self._rooms.pop(channel, None)
            self._watched.discard(room_id)
            self._detach(channel)
            raise

    async def remove(self, room_id: str) -> None:
        channel = self._store.channel(room_id).encode()
        if self._rooms.pop(channel, None) is None:
            return
        self._watched.discard(room_id)
        self._forget(room_id)
        future = self._pending.pop(channel, None)
        if future is not None and not future.done():
            future.cancel()
        link = self._detach(channel)
        if link is not None:
            with store_errors():
                await link.pubsub.sunsubscribe(channel)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._store._subscribers.discard(self)
        tasks = list(self._backfills.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for link in list(self._links.values()):
            await link.close()
        self._links.clear()
        for future in self._pending.values():
            future.cancel()
        self._rooms.clear()
        self._queue.put_nowait(None)

    async def __anext__(self) -> tuple[str, StoredEvent]:
        return await next_watched(self._queue, self._watched)

    # Links ------------------------------------------------------------------------------------

    def _owner(self, channel: bytes) -> str:
        if self._cluster is None:
            return _SINGLE
        try:
            node = self._cluster.get_node_from_key(channel.decode())
        except SlotNotCoveredError:  # not a RedisError: mid-failover, the slot has no owner yet
            node = None
        if node is None:
            raise StoreUnavailable("no cluster node owns the slot of " + channel.decode())
        return str(node.name)

    def _link(self, name: str) -> _Link:
        link = self._links.get(name)
        if link is not None:
            return link
        if self._cluster is None:
            link = _Link(name, self._store._client.pubsub(), None)
        else:
            node = self._cluster.get_node(node_name=name)
            assert node is not None
            kwargs = {k: v for k, v in node.connection_kwargs.items() if k != "event_dispatcher"}
            pool = aioredis.ConnectionPool(connection_class=node.connection_class, **kwargs)
            client = aioredis.Redis(connection_pool=pool)
            link = _Link(name, client.pubsub(), client)
        self._links[name] = link
        link.reader = asyncio.create_task(self._read_loop(link), name=f"room-subscriber-{name}")
        return link

    async def _subscribe(self, channel: bytes) -> None:
        if self._cluster is not None and not self._cluster.nodes_manager.slots_cache:
            await self._cluster.initialize()
        link = self._link(self._owner(channel))
        link.channels.add(channel)
        self._link_of[channel] = link
        await link.pubsub.ssubscribe(channel)

    def _detach(self, channel: bytes) -> _Link | None:
        link = self._link_of.pop(channel, None)
        if link is not None:
            link.channels.discard(channel)
        return link

    async def _rehome(self, link: _Link) -> None:
        """Move the link's rooms whose slot has a new owner (a failover, a migration)."""
        assert self._cluster is not None
        async with self._rehoming:
            try:
                await self._cluster.nodes_manager.initialize()
            except (RedisError, OSError) as exc:
                log.debug("room subscriber: slot map refresh failed: %s", exc)
                return
            for channel in list(link.channels):
                try:
                    owner = self._owner(channel)
                except StoreUnavailable:
                    # Mid-failover the refreshed map may give the slot no owner yet: the room
                    # stays here, and the link's next failure looks again. (Raised out of here,
                    # it ended the link's reader, and its rooms' live events with it.)
                    continue
                if owner == link.name:
                    continue
                link.channels.discard(channel)
                # Not sunsubscribe: the old owner may be dead. Dropping it from redis-py's
                # set keeps a reconnect of the old link from subscribing it there again.
                link.pubsub.shard_channels.pop(channel, None)
                target = self._link(owner)
                target.channels.add(channel)
                self._link_of[channel] = target
                log.info("room subscriber: %s moved from %s to %s", channel, link.name, owner)
                try:
                    await target.pubsub.ssubscribe(channel)  # its confirmation backfills
                except (RedisError, OSError):
                    target.pubsub.shard_channels[channel] = None  # a reconnect subscribes it
            if not link.channels and link.name in self._links:
                del self._links[link.name]
                await link.close()

    # Reading ----------------------------------------------------------------------------------

    def _forget(self, room_id: str) -> None:
        self._last.pop(room_id, None)
        self._baseline.pop(room_id, None)
        self._held.pop(room_id, None)
        self._refill.discard(room_id)
        task = self._backfills.pop(room_id, None)
        if task is not None:
            task.cancel()

    def _deliver(self, room_id: str, event: StoredEvent) -> None:
        last = self._last.get(room_id)
        if last is not None and event.seq <= last:
            return  # already delivered, by the backfill or live
        self._last[room_id] = event.seq
        self._queue.put_nowait((room_id, event))

    async def _read_loop(self, link: _Link) -> None:
        backoff = 0.05
        outage = OutageLog(log, f"room subscriber connection to {link.name}")
        silent_since = time.monotonic()
        pinged = False
        while not self._closed and self._links.get(link.name) is link:
            try:
                if not link.pubsub.subscribed:
                    await asyncio.sleep(0.05)  # nothing to read before the first SSUBSCRIBE
                    continue
                if link.pubsub.connection is None:
                    # Its first SSUBSCRIBE failed before it connected (``_rehome`` onto a
                    # primary just promoted): nothing but another one connects it.
                    await link.pubsub.ssubscribe(*link.pubsub.shard_channels)
                message = await link.pubsub.get_message(timeout=1.0)
                if message is None:
                    silence = time.monotonic() - silent_since
                    if silence > 2 * self.PING_AFTER and pinged:
                        log.warning("room subscriber: no reply for %.0fs, reconnecting", silence)
                        if link.pubsub.connection is not None:
                            await link.pubsub.connection.disconnect()
                        silent_since, pinged = time.monotonic(), False
                    elif silence > self.PING_AFTER and not pinged:
                        await link.pubsub.ping()
                        pinged = True
                    continue
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError):
                # redis-py gave up reconnecting for now; the next get_message reconnects and
                # re-subscribes, and each confirmation triggers a backfill. On a cluster the
                # server may be gone for good: see whether its slots have a new owner.
                outage.failed()
                if self._cluster is not None:
                    await self._rehome(link)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
                continue
            except Exception:
                # Never a reader that ends on its own: every room on the link would then get
                # its events only when its node commits to it, in bursts.
                log.exception("room subscriber: the reader of %s failed; reading on", link.name)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
                continue
            backoff = 0.05
            outage.succeeded()
            silent_since, pinged = time.monotonic(), False
            try:
                self._handle(link, message)
            except Exception:  # a bad message must not stop delivery for every room
                log.exception("room subscriber: cannot handle %r", message)

    def _handle(self, link: _Link, message: dict[str, Any]) -> None:
        kind = message["type"]
        channel = message["channel"]
        if kind == "smessage":
            room_id = self._rooms.get(channel)
            if room_id is None or channel in self._pending:
                return  # removed, or published before add() returned
            for event in _decode_events(message["data"]):
                held = self._held.get(room_id)
                if held is not None:
                    held.append(event)
                else:
                    self._deliver(room_id, event)
        elif kind == "ssubscribe":
            future = self._pending.pop(channel, None)
            if future is not None:
                if not future.done():
                    future.set_result(None)
            elif channel in self._rooms:
                # A re-subscription after a reconnect or a move: fetch what was committed
                # meanwhile.
                self._start_backfill(self._rooms[channel])
        elif kind == "sunsubscribe" and channel in self._rooms and self._cluster is not None:
            # Sent by the server when the slot left it: subscribe where it went.
            link.pubsub.shard_channels[channel] = None  # keep it ours until it is moved
            asyncio.get_running_loop().create_task(self._rehome(link))

    def _start_backfill(self, room_id: str) -> None:
        if room_id in self._backfills:
            self._refill.add(room_id)  # run once more after the current one
            return
        self._held.setdefault(room_id, [])
        self._backfills[room_id] = asyncio.create_task(
            self._backfill(room_id), name=f"room-backfill-{room_id}"
        )

    async def _backfill(self, room_id: str) -> None:
        backoff = 0.05
        try:
            while True:
                self._refill.discard(room_id)
                node = self._store.node
                if node is not None:
                    # A failover may have lost the record that this node watches the room,
                    # without which the others' commits are not published to it.
                    with contextlib.suppress(StoreError):
                        await self._store.watch_room(node, room_id)
                since = self._last.get(room_id, self._baseline.get(room_id, 0))
                try:
                    events = await self._store.events_since(room_id, since)
                except StoreError as exc:
                    # Keep holding live events: delivering them now would skip the gap for good.
                    log.warning("room subscriber: backfill of %s failed: %s", room_id, exc)
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 2.0)
                    self._refill.add(room_id)
                    continue
                if events is None:
                    log.warning(
                        "room subscriber: events of %s after seq %d cannot be backfilled "
                        "(log trimmed or room gone)",
                        room_id,
                        since,
                    )
                    events = []
                for event in events:
                    self._deliver(room_id, event)
                if room_id not in self._refill:
                    break
        finally:
            # A remove() (and maybe a new add()) may have replaced this task meanwhile.
            if self._backfills.get(room_id) is asyncio.current_task():
                del self._backfills[room_id]
                for event in self._held.pop(room_id, []):
                    self._deliver(room_id, event)
