"""The Redis room store (production): redis-py asyncio with hiredis, one Lua script per step.

Keys (``prefix`` defaults to ``hearts``; every key of one room shares the ``{room:ID}`` hash tag):

- ``hearts:{room:ID}:state`` hash: ``v`` version, ``s`` state bytes, ``q`` newest event seq,
  ``n`` nonce of the last commit (lets a retried commit recognise its own earlier success).
- ``hearts:{room:ID}:log`` stream: one entry per event, id ``<seq>-0``, fields ``d`` (data) and
  ``p`` (seq of the event before it), trimmed with ``XADD … MAXLEN ~ max_log``.
- ``hearts:{room:ID}:archive:GAME`` hash: records of the game's finished hands (their audits
  and summaries), written once by the commit that ends each hand; not part of the hot state.
- ``hearts:{room:ID}:events`` pub/sub channel: one msgpack ``[[seq, data], …]`` per commit.
- ``hearts:deadlines`` sorted set (member room id, score deadline), ``hearts:heartbeat`` hash,
  ``hearts:lease:NAME`` strings.
- ``hearts:{nodes}:alive:NODE`` (expiring string), ``hearts:{nodes}:rooms:NODE`` (set of the
  rooms where the node holds sockets) and ``hearts:{nodes}:tracked`` (nodes with such a set):
  a node that stops renewing its key is reaped and its connections dropped from its rooms.

Why a stream rather than a list: ``XRANGE log <after+1>-0 +`` finds the resume point by seq in
O(log n) without scanning, ids double as seqs, and ``MAXLEN ~`` trims whole nodes cheaply.
Because approximate trimming does not say what it dropped, each entry carries its predecessor's
seq ``p``: if the first entry after ``after_seq`` has ``p > after_seq``, the event ``p`` was
trimmed and the reader has a gap. That is exact even if seqs are not contiguous.

Redis Cluster: the per-room keys already share a slot, but ``hearts:deadlines`` and the
heartbeat are global, and the commit script touches the room's keys *and* the deadline set.
On a cluster the deadline set would have to be sharded per slot (one set per hash tag
``{deadlines:N}`` chosen by the room's slot, claimed slot by slot) and PUBLISH replaced by
SPUBLISH. We run a single primary today, so this is not done.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
from collections.abc import Iterator, Sequence
from importlib import resources
from typing import Any

import msgpack
import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server import metrics
from server.outage_log import OutageLog
from server.store.base import (
    DEFAULT_MAX_LOG,
    Archive,
    RoomStore,
    Snapshot,
    StoredEvent,
    StoreError,
    StoreUnavailable,
    Subscriber,
    check_deadline,
    check_events,
    check_max_log,
)

log = logging.getLogger(__name__)

_SUBSCRIBE_TIMEOUT = 10.0
"""Seconds add() waits for Redis to confirm a SUBSCRIBE."""


def _load_script(name: str) -> str:
    return resources.files("server.store").joinpath(name).read_text(encoding="utf-8")


@contextlib.contextmanager
def _errors() -> Iterator[None]:
    """Map redis-py errors to the store's own, so callers never import redis.

    Each use is one call to Redis (a command, a script or a pipeline: one round trip, but for
    ``events_since``, which may take two), counted for the cost-per-card figures.
    """
    metrics.STORE_CALLS.inc()
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        raise StoreUnavailable(str(exc)) from exc
    except RedisError as exc:
        raise StoreError(str(exc)) from exc


def _decode_events(payload: bytes) -> list[StoredEvent]:
    return [StoredEvent(seq, data) for seq, data in msgpack.unpackb(payload)]


class RedisRoomStore(RoomStore):
    """Rooms in Redis; see the module docstring for the key layout."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "hearts",
        max_log: int = DEFAULT_MAX_LOG,
        client: aioredis.Redis | None = None,
    ) -> None:
        """Connect lazily to ``url`` (or use ``client``, which ``close()`` then closes)."""
        self.url = url
        self.prefix = prefix
        self.max_log = check_max_log(max_log)
        # Bytes in and out: states and events are opaque, and hiredis skips decoding work.
        self._client: aioredis.Redis = client or aioredis.Redis.from_url(
            url, decode_responses=False
        )
        self._deadlines_key = f"{prefix}:deadlines"
        self._heartbeat_key = f"{prefix}:heartbeat"
        # AsyncScript sends EVALSHA and, on NOSCRIPT (restart, failover, SCRIPT FLUSH),
        # loads the script and sends it again.
        self._commit_script = self._script("commit.lua")
        self._claim_script = self._script("claim_due.lua")
        self._shift_script = self._script("shift_deadlines.lua")
        self._heartbeat_script = self._script("heartbeat.lua")
        self._acquire_script = self._script("acquire_lease.lua")
        self._release_script = self._script("release_lease.lua")
        self._reap_script = self._script("reap_nodes.lua")
        self._nodes = f"{prefix}:{{nodes}}:"  # one hash tag: the reap script's keys share a slot
        self._subscribers: set[RedisSubscriber] = set()

    def _script(self, name: str) -> AsyncScript:
        return self._client.register_script(_load_script(name))

    # Key names -------------------------------------------------------------------------------

    def _room_key(self, room_id: str, part: str) -> str:
        return f"{self.prefix}:{{room:{room_id}}}:{part}"

    def channel(self, room_id: str) -> str:
        """The pub/sub channel the room's commits are published on."""
        return self._room_key(room_id, "events")

    # Clock and rooms -------------------------------------------------------------------------

    async def now(self) -> float:
        with _errors():
            seconds, micros = await self._client.time()
        return seconds + micros / 1_000_000

    async def create_room(
        self,
        room_id: str,
        state: bytes,
        events: Sequence[StoredEvent],
        deadline: float | None,
    ) -> bool:
        return await self._commit(room_id, 0, state, events, deadline, os.urandom(8))

    async def load_room(self, room_id: str) -> Snapshot | None:
        with _errors():
            version, state = await self._client.hmget(self._room_key(room_id, "state"), "v", "s")
        if version is None:
            return None
        return Snapshot(int(version), state)

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
        if expected_version < 1:
            raise ValueError("expected_version must be at least 1; use create_room")
        return await self._commit(
            room_id, expected_version, state, events, deadline, os.urandom(8), archive, ttl
        )

    def _archive_key(self, room_id: str, name: str) -> str:
        return self._room_key(room_id, f"archive:{name}")

    async def _commit(
        self,
        room_id: str,
        expected_version: int,
        state: bytes,
        events: Sequence[StoredEvent],
        deadline: float | None,
        nonce: bytes,
        archive: Archive | None = None,
        ttl: float | None = None,
    ) -> bool:
        """Run commit.lua. ``nonce`` identifies this call so a redis-py retry after a lost reply
        reports the earlier success instead of a conflict."""
        check_events(events)
        check_deadline(deadline)
        payload = msgpack.packb([[e.seq, e.data] for e in events]) if events else b""
        records = archive.records if archive is not None else {}
        args: list[bytes | str | int] = [
            expected_version,
            state,
            "" if deadline is None else repr(float(deadline)),
            room_id,
            self.channel(room_id),
            self.max_log,
            payload,
            nonce,
            "" if ttl is None else max(1, math.ceil(ttl * 1000)),
            len(records),
        ]
        for name, record in records.items():
            args.append(name)
            args.append(record)
        for event in events:
            args.append(event.seq)
            args.append(event.data)
        keys = [
            self._room_key(room_id, "state"),
            self._room_key(room_id, "log"),
            self._deadlines_key,
            self._archive_key(room_id, archive.name if archive is not None else "-"),
        ]
        try:
            with _errors():
                applied = await self._commit_script(keys=keys, args=args)
        except StoreError as exc:
            if isinstance(exc.__cause__, ResponseError) and "event seq" in str(exc):
                raise ValueError(str(exc)) from exc
            raise
        return bool(applied)

    async def archived(self, room_id: str, archive: str) -> dict[str, bytes]:
        with _errors():
            raw = await self._client.hgetall(self._archive_key(room_id, archive))
        return {k.decode(): v for k, v in raw.items()}

    async def archived_record(self, room_id: str, archive: str, name: str) -> bytes | None:
        with _errors():
            return await self._client.hget(self._archive_key(room_id, archive), name)

    async def delete_room(self, room_id: str) -> bool:
        with _errors():
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.delete(self._room_key(room_id, "state"), self._room_key(room_id, "log"))
                pipe.zrem(self._deadlines_key, room_id)
                deleted, _ = await pipe.execute()
        return bool(deleted)

    async def events_since(self, room_id: str, after_seq: int) -> list[StoredEvent] | None:
        after_seq = max(after_seq, 0)
        with _errors():
            entries = await self._client.xrange(
                self._room_key(room_id, "log"), min=f"{after_seq + 1}-0", max="+"
            )
            if not entries:
                # The newest event is never trimmed, so nothing newer exists: either the room
                # is up to date or there is no room at all.
                exists = await self._client.exists(self._room_key(room_id, "state"))
                return [] if exists else None
        if int(entries[0][1][b"p"]) > after_seq:
            return None  # the event just before the first one we hold was trimmed
        return [
            StoredEvent(int(entry_id.split(b"-", 1)[0]), fields[b"d"])
            for entry_id, fields in entries
        ]

    async def _last_seq(self, room_id: str) -> int:
        with _errors():
            last = await self._client.hget(self._room_key(room_id, "state"), "q")
        return int(last) if last is not None else 0

    # Fan-out ---------------------------------------------------------------------------------

    def subscriber(self) -> Subscriber:
        subscriber = RedisSubscriber(self)
        self._subscribers.add(subscriber)
        return subscriber

    # Deadlines -------------------------------------------------------------------------------

    async def claim_due(self, now: float, limit: int, lease: float) -> list[str]:
        if limit <= 0:
            return []
        with _errors():
            rooms = await self._claim_script(
                keys=[self._deadlines_key], args=[repr(float(now)), limit, repr(now + lease)]
            )
        return [room.decode() for room in rooms]

    async def next_deadline(self, room_id: str) -> float | None:
        with _errors():
            return await self._client.zscore(self._deadlines_key, room_id)

    async def heartbeat(self, now: float) -> float | None:
        with _errors():
            previous = await self._heartbeat_script(
                keys=[self._heartbeat_key], args=[repr(float(now)), os.urandom(8)]
            )
        return None if previous is None else float(previous)

    async def shift_deadlines(self, delta: float) -> int:
        with _errors():
            return int(
                await self._shift_script(keys=[self._deadlines_key], args=[repr(float(delta))])
            )

    async def record_outage(self, ended: float, delta: float) -> None:
        with _errors():
            await self._client.set(f"{self.prefix}:outage", f"{ended!r} {delta!r}")

    async def last_outage(self) -> tuple[float, float] | None:
        with _errors():
            raw = await self._client.get(f"{self.prefix}:outage")
        if raw is None:
            return None
        ended, delta = (raw.decode() if isinstance(raw, bytes) else raw).split()
        return float(ended), float(delta)

    # Leases ----------------------------------------------------------------------------------

    async def acquire_lease(self, name: str, holder: str, ttl: float) -> bool:
        ttl_ms = max(1, math.ceil(ttl * 1000))
        with _errors():
            return bool(
                await self._acquire_script(
                    keys=[f"{self.prefix}:lease:{name}"], args=[holder, ttl_ms]
                )
            )

    async def release_lease(self, name: str, holder: str) -> bool:
        with _errors():
            return bool(
                await self._release_script(keys=[f"{self.prefix}:lease:{name}"], args=[holder])
            )

    # Node presence ---------------------------------------------------------------------------

    async def node_alive(self, node: str, ttl: float) -> bool:
        ttl_ms = max(1, math.ceil(ttl * 1000))
        with _errors():
            previous = await self._client.set(
                f"{self._nodes}alive:{node}", b"1", px=ttl_ms, get=True
            )
        return previous is not None

    async def track_room(self, node: str, room_id: str) -> None:
        with _errors():
            pipe = self._client.pipeline(transaction=True)
            pipe.sadd(f"{self._nodes}rooms:{node}", room_id)
            pipe.sadd(f"{self._nodes}tracked", node)
            await pipe.execute()

    async def untrack_room(self, node: str, room_id: str) -> None:
        with _errors():
            await self._client.srem(f"{self._nodes}rooms:{node}", room_id)

    async def reap_nodes(self) -> list[tuple[str, list[str]]]:
        with _errors():
            flat = await self._reap_script(keys=[f"{self._nodes}tracked"], args=[self._nodes])
        out: list[tuple[str, list[str]]] = []
        i = 0
        while i < len(flat):
            node, count = flat[i].decode(), int(flat[i + 1])
            out.append((node, [r.decode() for r in flat[i + 2 : i + 2 + count]]))
            i += 2 + count
        return out

    # Lifecycle -------------------------------------------------------------------------------

    async def ping(self) -> bool:
        try:
            return bool(await self._client.ping())
        except (RedisError, OSError):
            return False

    async def close(self) -> None:
        for subscriber in list(self._subscribers):
            await subscriber.close()
        await self._client.aclose()


class RedisSubscriber(Subscriber):
    """One pub/sub connection carrying every room a node watches.

    A reader task turns messages into ``(room_id, event)`` items on a queue. If the connection
    drops, redis-py reconnects and re-subscribes; each re-subscription confirmation makes this
    class fetch what was committed meanwhile from the room's log (``events_since`` from the
    last seq it delivered), holding back live messages of that room until the backfill is out,
    so the stream of events per room stays gap-free and in order. Only if the log was trimmed
    past the gap (thousands of events of one room during the outage) are events lost, and that
    is logged.
    """

    PING_AFTER = 5.0
    """Seconds of silence after which the reader pings; twice that without a reply and it
    drops the connection, since a half-open TCP connection would otherwise block forever."""

    def __init__(self, store: RedisRoomStore) -> None:
        self._store = store
        self._pubsub = store._client.pubsub()
        self._rooms: dict[bytes, str] = {}  # channel -> room id, for rooms added
        self._watched: set[str] = set()  # room ids added and not removed
        self._pending: dict[bytes, asyncio.Future[None]] = {}  # SUBSCRIBEs not yet confirmed
        self._last: dict[str, int] = {}  # newest seq delivered per room (dedupe, backfill)
        self._baseline: dict[str, int] = {}  # room's newest seq when add() confirmed
        self._held: dict[str, list[StoredEvent]] = {}  # live events held during a backfill
        self._backfills: dict[str, asyncio.Task[None]] = {}
        self._refill: set[str] = set()
        self._queue: asyncio.Queue[tuple[str, StoredEvent] | None] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None
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
            with _errors():
                await self._pubsub.subscribe(channel)
            if self._reader is None:
                self._reader = asyncio.create_task(self._read_loop(), name="room-subscriber")
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
        with _errors():
            await self._pubsub.unsubscribe(channel)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._store._subscribers.discard(self)
        tasks = [t for t in (self._reader, *self._backfills.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for future in self._pending.values():
            future.cancel()
        self._rooms.clear()
        with contextlib.suppress(RedisError, OSError):
            await self._pubsub.aclose()
        self._queue.put_nowait(None)

    async def __anext__(self) -> tuple[str, StoredEvent]:
        while True:
            item = await self._queue.get()
            if item is None:
                self._queue.put_nowait(None)  # later calls end too
                raise StopAsyncIteration
            if item[0] in self._watched:  # drop what was queued before remove()
                return item

    # Internals ---------------------------------------------------------------------------------

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

    async def _read_loop(self) -> None:
        backoff = 0.05
        outage = OutageLog(log, "room subscriber connection")
        silent_since = time.monotonic()
        pinged = False
        while not self._closed:
            try:
                message = await self._pubsub.get_message(timeout=1.0)
                if message is None:
                    silence = time.monotonic() - silent_since
                    if silence > 2 * self.PING_AFTER and pinged:
                        log.warning("room subscriber: no reply for %.0fs, reconnecting", silence)
                        if self._pubsub.connection is not None:
                            await self._pubsub.connection.disconnect()
                        silent_since, pinged = time.monotonic(), False
                    elif silence > self.PING_AFTER and not pinged:
                        await self._pubsub.ping()
                        pinged = True
                    continue
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError):
                # redis-py gave up reconnecting for now; the next get_message reconnects and
                # re-subscribes, and each confirmation triggers a backfill.
                outage.failed()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            backoff = 0.05
            outage.succeeded()
            silent_since, pinged = time.monotonic(), False
            try:
                self._handle(message)
            except Exception:  # a bad message must not stop delivery for every room
                log.exception("room subscriber: cannot handle %r", message)

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        channel = message["channel"]
        if kind == "message":
            room_id = self._rooms.get(channel)
            if room_id is None or channel in self._pending:
                return  # removed, or published before add() returned
            for event in _decode_events(message["data"]):
                held = self._held.get(room_id)
                if held is not None:
                    held.append(event)
                else:
                    self._deliver(room_id, event)
        elif kind == "subscribe":
            future = self._pending.pop(channel, None)
            if future is not None:
                if not future.done():
                    future.set_result(None)
            elif channel in self._rooms:
                # A re-subscription after a reconnect: fetch what was committed meanwhile.
                self._start_backfill(self._rooms[channel])

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
