"""The Redis room store (production): one Redis or a Redis Cluster, one Lua script per step.

Keys (``prefix`` defaults to ``hearts``). Rooms are spread over 64 shards, each under its own
hash tag ``{sN}`` (``keys``); every key of a room carries its shard's tag, so everything
one commit touches is in one hash slot, as a Redis Cluster requires:

- ``hearts:{sN}:room:ID:state`` hash: ``v`` version, ``s`` state bytes, ``q`` newest event seq,
  ``n`` nonce of the last commit (lets a retried commit recognise its own earlier success),
  ``x`` 1 while the room's keys expire (a room not in play), 0 while they last: a commit in
  play makes them lasting again unless it finds 0 (absent: stored before ``x`` was kept).
- ``hearts:{sN}:room:ID:log`` stream: one entry per event, id ``<seq>-0``, fields ``d`` (data)
  and ``p`` (seq of the event before it), trimmed with ``XADD … MAXLEN ~ max_log``.
- ``hearts:{sN}:room:ID:archive:GAME`` hash: records of the game's finished hands (their audits
  and summaries), written once by the commit that ends each hand; not part of the hot state.
- ``hearts:{sN}:room:ID:events`` sharded pub/sub channel (SPUBLISH): one msgpack
  ``[[seq, data], …]`` per commit, heard only by nodes watching the room, on the shard's owner.
  Not published when the committing node is the room's only watcher (it delivers its own
  events): ``hearts:{sN}:room:ID:nodes``, the set of nodes watching the room, says so.
- ``hearts:{sN}:deadlines`` sorted set of the shard's rooms (member room id, score deadline);
  schedulers claim from every shard (``deadlines``).
- ``hearts:heartbeat`` hash, ``hearts:outage`` and ``hearts:lease:NAME`` strings: one key per
  operation, so any slot will do.
- ``hearts:seated:PLAYER`` set of the rooms that seat the player (issue 54's "Your games"),
  one key per player, so any slot; it lapses ``SEATED_TTL`` after the player last sat down.
- ``hearts:{nodes}:alive:NODE`` (expiring string), ``hearts:{nodes}:rooms:NODE`` (set of the
  rooms where the node holds sockets) and ``hearts:{nodes}:tracked`` (nodes with such a set):
  a node that stops renewing its key is reaped and its connections dropped from its rooms. The
  reap script's keys share the ``{nodes}`` slot.

Why a stream rather than a list: ``XRANGE log <after+1>-0 +`` finds the resume point by seq in
O(log n) without scanning, ids double as seqs, and ``MAXLEN ~`` trims whole nodes cheaply.
Because approximate trimming does not say what it dropped, each entry carries its predecessor's
seq ``p``: if the first entry after ``after_seq`` has ``p > after_seq``, the event ``p`` was
trimmed and the reader has a gap. That is exact even if seqs are not contiguous.

Durability on failover: Redis replicates asynchronously, so a primary that dies right after
acknowledging a commit can lose it. ``wait_replicas`` > 0 makes every commit also send
``WAIT wait_replicas wait_ms`` on the same connection (one round trip, pipelined), so a commit
is acknowledged only once a replica has it or the bounded wait ran out
(``HEARTS_REDIS_WAIT_REPLICAS``, ``HEARTS_REDIS_WAIT_MS``; measured in docs/cluster.md).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Sequence

from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError, RedisError, ResponseError

from protocol.packer import pack
from server.ops import metrics
from server.store.redis.client.batching import ScriptBatcher
from server.store.redis.client.connect import (
    Client,
    as_bytes,
    as_text,
    connect,
    load_script,
    reply_timeout,
    store_errors,
    stream_entries,
)
from server.store.redis.deadlines import ShardedDeadlines
from server.store.redis.keys import RoomKeys, shard_of
from server.store.redis.nonces import call_nonce
from server.store.redis.subscriber import RedisSubscriber
from server.store.rooms import (
    DEFAULT_MAX_LOG,
    Archive,
    EventOrderError,
    RoomStore,
    Snapshot,
    StoredEvent,
    StoreError,
    Subscriber,
    check_deadline,
    check_events,
    check_max_log,
)

log = logging.getLogger(__name__)
SEATED_TTL = 30 * 24 * 3600  # a player's index of rooms lapses a month after they last sat down

# Kept for callers that imported them from here (the league store).


class RedisRoomStore(RoomStore):
    """Rooms in Redis; see the module docstring for the key layout."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "hearts",
        max_log: int = DEFAULT_MAX_LOG,
        client: Client | None = None,
        wait_replicas: int = 0,
        wait_ms: int = 50,
        node: str | None = None,
    ) -> None:
        """Connect lazily to ``url`` (or use ``client``, which ``close()`` then closes).

        ``wait_replicas`` > 0: acknowledge a commit only after that many replicas have it, or
        after ``wait_ms`` (see the module docstring). ``node``: the node this store serves;
        its commits to a room that no other node watches are not published (it delivers its
        own events itself, ``server.fanout.hub``). None: every commit is published.
        """
        self.node = node
        self.url = url
        self.prefix = prefix
        self.max_log = check_max_log(max_log)
        if wait_replicas < 0 or wait_ms < 0:
            raise ValueError("wait_replicas and wait_ms must not be negative")
        self.wait_replicas = wait_replicas
        self.wait_ms = wait_ms
        # Bytes in and out: states and events are opaque, and hiredis skips decoding work.
        self._client: Client = client or connect(url)
        timeout = reply_timeout(self._client)
        if wait_replicas and wait_ms >= timeout * 500:
            raise ValueError(
                f"wait_ms ({wait_ms}) must be under half the reply timeout ({timeout:g} s), "
                "or every commit that waits the whole time would time out"
            )
        self.keys = RoomKeys(prefix)
        self._heartbeat_key = self.keys.heartbeat
        # AsyncScript sends EVALSHA and, on NOSCRIPT (restart, failover, SCRIPT FLUSH),
        # loads the script and sends it again.
        self._commit_script = self._script("commit.lua")
        self._commits = ScriptBatcher(self._client, self._commit_script)  # group commit
        self._claim_script = self._script("claim_due.lua")
        self._shift_script = self._script("shift_deadlines.lua")
        self._heartbeat_script = self._script("heartbeat.lua")
        self._acquire_script = self._script("acquire_lease.lua")
        self._release_script = self._script("release_lease.lua")
        self._reap_script = self._script("reap_nodes.lua")
        self._nodes = self.keys.nodes
        self._deadlines = ShardedDeadlines(
            self._client, self.keys, self._claim_script, lanes=self._commits.lanes
        )
        self._subscribers: set[RedisSubscriber] = set()

    def _script(self, name: str) -> AsyncScript:
        return self._client.register_script(load_script(name))

    @property
    def cluster(self) -> bool:
        """True on a Redis Cluster."""
        return isinstance(self._client, RedisCluster)

    # Key names -------------------------------------------------------------------------------

    def _room_key(self, room_id: str, part: str) -> str:
        return self.keys.room(room_id, part)

    def channel(self, room_id: str) -> str:
        """The sharded pub/sub channel the room's commits are published on."""
        return self.keys.channel(room_id)

    # Clock and rooms -------------------------------------------------------------------------

    async def now(self) -> float:
        with store_errors():
            seconds, micros = await self._client.time()
        return seconds + micros / 1_000_000

    async def create_room(
        self,
        room_id: str,
        state: bytes,
        events: Sequence[StoredEvent],
        deadline: float | None,
    ) -> bool:
        return await self._commit(room_id, 0, state, events, deadline, call_nonce())

    async def load_room(self, room_id: str) -> Snapshot | None:
        with store_errors():
            version, state = await self._client.hmget(self._room_key(room_id, "state"), "v", "s")
        if version is None:
            return None
        return Snapshot(int(version), as_bytes(state))

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
            room_id, expected_version, state, events, deadline, call_nonce(), archive, ttl
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
        names = self.keys.commit_keys(room_id)
        payload = pack([[e.seq, e.data] for e in events]) if events else b""
        records = archive.records if archive is not None else {}
        args: list[bytes | str | int] = [
            expected_version,
            state,
            "" if deadline is None else repr(float(deadline)),
            room_id,
            names.channel,
            self.max_log,
            payload,
            nonce,
            "" if ttl is None else max(1, math.ceil(ttl * 1000)),
            len(records),
            self.node or "",
        ]
        for name, record in records.items():
            args.append(name)
            args.append(record)
        for event in events:
            args.append(event.seq)
            args.append(event.data)
        keys = [
            names.state,
            names.log,
            names.deadlines,
            names.no_archive if archive is None else self._archive_key(room_id, archive.name),
            names.nodes,
        ]
        try:
            with store_errors():
                if self.wait_replicas:
                    applied = await self._commit_and_wait(keys, args)
                else:
                    applied = await self._commits(keys, args)
        except StoreError as exc:
            reply = exc.__cause__
            if isinstance(reply, ResponseError) and str(reply).startswith(EventOrderError.CODE):
                raise EventOrderError(str(reply)) from exc
            raise
        if applied:
            self._deadlines.noted(names.shard, deadline)
        return bool(applied)

    async def _commit_and_wait(self, keys: list[str], args: list[bytes | str | int]) -> object:
        """The commit script and ``WAIT`` in one pipeline: WAIT counts the writes of its own
        connection, so it must follow the script on the very same one (on a cluster: the
        slot's primary)."""
        for _attempt in range(2):
            async with self._client.pipeline(transaction=False) as pipe:
                # execute_command: redis-py blocks pipe.evalsha on a cluster, not the command.
                pipe.execute_command("EVALSHA", self._commit_script.sha, len(keys), *keys, *args)
                if isinstance(self._client, RedisCluster):
                    node = self._client.get_node_from_key(keys[0])
                    pipe.execute_command(
                        "WAIT", self.wait_replicas, self.wait_ms, target_nodes=node
                    )
                else:
                    pipe.execute_command("WAIT", self.wait_replicas, self.wait_ms)
                applied, acked = await pipe.execute(raise_on_error=False)
            if isinstance(applied, NoScriptError):
                # A restarted or promoted server has an empty script cache.
                await self._client.script_load(self._commit_script.script)
                continue
            if isinstance(applied, Exception):
                raise applied
            if isinstance(acked, int) and acked < self.wait_replicas:
                metrics.UNREPLICATED_COMMITS.inc()
            return applied
        raise StoreError("the commit script could not be loaded")

    async def archived(self, room_id: str, archive: str) -> dict[str, bytes]:
        with store_errors():
            raw = await self._client.hgetall(self._archive_key(room_id, archive))
        return {as_text(k): as_bytes(v) for k, v in raw.items()}

    async def archived_record(self, room_id: str, archive: str, name: str) -> bytes | None:
        with store_errors():
            record = await self._client.hget(self._archive_key(room_id, archive), name)
        return None if record is None else as_bytes(record)

    async def delete_room(self, room_id: str) -> bool:
        with store_errors():
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.delete(
                    self._room_key(room_id, "state"),
                    self._room_key(room_id, "log"),
                    self._room_key(room_id, "nodes"),
                )
                pipe.zrem(self.keys.deadlines(shard_of(room_id)), room_id)
                deleted, _ = await pipe.execute()
        return bool(deleted)

    async def events_since(self, room_id: str, after_seq: int) -> list[StoredEvent] | None:
        after_seq = max(after_seq, 0)
        with store_errors():
            entries = stream_entries(
                await self._client.xrange(
                    self._room_key(room_id, "log"), min=f"{after_seq + 1}-0", max="+"
                )
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
        with store_errors():
            last = await self._client.hget(self._room_key(room_id, "state"), "q")
        return int(last) if last is not None else 0

    # Fan-out ---------------------------------------------------------------------------------

    def subscriber(self) -> Subscriber:
        subscriber = RedisSubscriber(self)
        self._subscribers.add(subscriber)
        return subscriber

    # Deadlines -------------------------------------------------------------------------------

    async def claim_due(self, now: float, limit: int, lease: float) -> list[str]:
        # Sweeps are paced by this process's clock: ``now`` may be a test's made-up time.
        return await self._deadlines.claim(now, limit, lease, time.monotonic())

    async def next_deadline(self, room_id: str) -> float | None:
        with store_errors():
            return await self._client.zscore(self.keys.deadlines(shard_of(room_id)), room_id)

    async def heartbeat(self, now: float) -> float | None:
        with store_errors():
            previous = await self._heartbeat_script(
                keys=[self._heartbeat_key], args=[repr(float(now)), call_nonce()]
            )
        return None if previous is None else float(previous)

    async def shift_deadlines(self, delta: float) -> int:
        return await self._deadlines.shift(float(delta), self._shift_script)

    async def record_outage(self, ended: float, delta: float) -> None:
        with store_errors():
            await self._client.set(self.keys.outage, f"{ended!r} {delta!r}")

    async def last_outage(self) -> tuple[float, float] | None:
        with store_errors():
            raw = await self._client.get(self.keys.outage)
        if raw is None:
            return None
        ended, delta = (raw.decode() if isinstance(raw, bytes) else raw).split()
        return float(ended), float(delta)

    # Leases ----------------------------------------------------------------------------------

    async def acquire_lease(self, name: str, holder: str, ttl: float) -> bool:
        ttl_ms = max(1, math.ceil(ttl * 1000))
        with store_errors():
            return bool(
                await self._acquire_script(keys=[self.keys.lease(name)], args=[holder, ttl_ms])
            )

    async def release_lease(self, name: str, holder: str) -> bool:
        with store_errors():
            return bool(await self._release_script(keys=[self.keys.lease(name)], args=[holder]))

    # Node presence ---------------------------------------------------------------------------

    async def node_alive(self, node: str, ttl: float) -> bool:
        ttl_ms = max(1, math.ceil(ttl * 1000))
        with store_errors():
            previous = await self._client.set(
                f"{self._nodes}alive:{node}", b"1", px=ttl_ms, get=True
            )
        return previous is not None

    async def track_room(self, node: str, room_id: str) -> None:
        async def record() -> None:
            with store_errors():
                pipe = self._client.pipeline(transaction=True)
                pipe.sadd(f"{self._nodes}rooms:{node}", room_id)
                pipe.sadd(f"{self._nodes}tracked", node)
                await pipe.execute()

        # Two slots on a cluster: both at once, so watching costs one round trip, not two.
        await asyncio.gather(record(), self.watch_room(node, room_id))

    async def watch_room(self, node: str, room_id: str) -> None:
        """``node`` watches the room: publish the others' commits to it (the room's slot, so
        not in the transaction above on a cluster). Lives and expires with the room."""
        with store_errors():
            await self._client.sadd(self._room_key(room_id, "nodes"), node)

    async def untrack_room(self, node: str, room_id: str) -> None:
        with store_errors():
            await asyncio.gather(
                self._client.srem(f"{self._nodes}rooms:{node}", room_id),
                self._client.srem(self._room_key(room_id, "nodes"), node),
            )

    async def reap_nodes(self) -> list[tuple[str, list[str]]]:
        with store_errors():
            flat = await self._reap_script(keys=[f"{self._nodes}tracked"], args=[self._nodes])
        out: list[tuple[str, list[str]]] = []
        i = 0
        while i < len(flat):
            node, count = flat[i].decode(), int(flat[i + 1])
            out.append((node, [r.decode() for r in flat[i + 2 : i + 2 + count]]))
            i += 2 + count
        return out

    # The players' index of rooms -------------------------------------------------------------

    async def index_seats(self, room_id: str, seated: Sequence[str], left: Sequence[str]) -> None:
        """One set per player (its own slot on a cluster), renewed while the player sits down."""
        with store_errors():
            pipe = self._client.pipeline(transaction=False)
            for player in seated:
                key = self.keys.seated(player)
                pipe.sadd(key, room_id)
                pipe.expire(key, SEATED_TTL)
            for player in left:
                pipe.srem(self.keys.seated(player), room_id)
            await pipe.execute()

    async def seated_rooms(self, player_id: str) -> list[str]:
        with store_errors():
            rooms = await self._client.smembers(self.keys.seated(player_id))
        return sorted(r.decode() if isinstance(r, bytes) else str(r) for r in rooms)

    # Lifecycle -------------------------------------------------------------------------------

    async def ping(self) -> bool:
        try:
            return bool(await self._client.ping())
        except (RedisError, OSError):
            return False

    async def close(self) -> None:
        for subscriber in list(self._subscribers):
            await subscriber.close()
        self._commits.close()
        await self._client.aclose()
