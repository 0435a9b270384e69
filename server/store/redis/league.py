"""The Redis league store: the quick-play queue, seat assignments and pending tables.

Keys (``prefix`` is the room store's, default ``hearts``). All share the ``{league}`` hash tag,
so every script touches one slot and the design runs on Redis Cluster; the price is that the
league lives on one shard, which its size (a few entries per queued player) allows.

- ``hearts:{league}:queue`` hash: id → ``"target|display|joined_at"``;
  ``hearts:{league}:queue:names`` hash: id → name; ``hearts:{league}:queue:seen`` sorted set:
  id → when its node last said the player is still there
- ``hearts:{league}:assign:ID`` string: the room id, with a TTL
- ``hearts:{league}:pending`` hash: room id → time noted, or ``-`` once it is being
  abandoned (the matchmaker's journal)
- sessions and throttles: see ``sessions.py``

Keys an older version wrote here for ratings, the ladder, game records and accounts
(``:players``, ``:names``, ``:ladder:*``, ``:history:*``, ``:recent:*``, ``:game:*``,
``:accounts``, ``:account:names``) are no longer read: that data lives in the store of record.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from matchmaker.matching import QueueEntry
from server.store.league import (
    DEFAULT_ASSIGNMENT_TTL,
    LeagueStore,
    Seating,
    check_entry,
    check_seatings,
    decode_entry,
    encode_entry,
)
from server.store.redis.client.connect import Client, as_text, connect, store_errors
from server.store.redis.sessions import RedisSessions
from server.store.sessions import check_finite


class RedisLeagueStore(RedisSessions, LeagueStore):
    """The league in Redis; see the module docstring for the key layout."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "hearts",
        client: Client | None = None,
        assignment_ttl: float = DEFAULT_ASSIGNMENT_TTL,
    ) -> None:
        if assignment_ttl <= 0:
            raise ValueError("the assignment ttl must be positive")
        self.url = url
        self.prefix = prefix
        self.assignment_ttl = assignment_ttl
        self._client: Client = client or connect(url)
        base = f"{prefix}:{{league}}"
        self._base = base
        self._queue_key = f"{base}:queue"
        self._queue_names_key = f"{base}:queue:names"
        self._queue_seen_key = f"{base}:queue:seen"
        self._pending_key = f"{base}:pending"
        self._enqueue_script = self._register("league_enqueue.lua")
        self._dequeue_script = self._register("league_dequeue.lua")
        self._purge_script = self._register("league_purge.lua")
        self._seat_script = self._register("league_seat.lua")
        self._stale_script = self._register("league_stale.lua")
        self._init_sessions()

    def _key(self, kind: str, ident: str) -> str:
        return f"{self._base}:{kind}:{ident}"

    # The quick-play queue ---------------------------------------------------------------------

    async def enqueue(self, entry: QueueEntry, name: str, *, now: float | None = None) -> bool:
        check_entry(entry)
        seen = entry.joined_at if now is None else now
        check_finite(seen)
        with store_errors():
            queued = await self._enqueue_script(
                keys=[
                    self._queue_key,
                    self._queue_names_key,
                    self._queue_seen_key,
                    self._key("assign", entry.player_id),
                ],
                args=[entry.player_id, encode_entry(entry), name, repr(float(seen))],
            )
        return bool(queued)

    def _queue_keys(self) -> list[str]:
        return [self._queue_key, self._queue_names_key, self._queue_seen_key]

    async def dequeue(self, player_id: str) -> bool:
        with store_errors():
            removed = await self._dequeue_script(keys=self._queue_keys(), args=[player_id])
        return bool(removed)

    async def touch_queue(self, player_ids: Iterable[str], now: float) -> int:
        check_finite(now)
        ids = list(dict.fromkeys(player_ids))
        if not ids:
            return 0
        with store_errors():
            # XX: only players still queued (the seen set holds exactly the queued ones).
            async with self._client.pipeline(transaction=True) as pipe:
                pipe.zadd(self._queue_seen_key, dict.fromkeys(ids, float(now)), xx=True)
                pipe.zmscore(self._queue_seen_key, ids)
                _, scores = await pipe.execute()
        return sum(score is not None for score in scores)

    async def purge_queue(self, before: float) -> list[str]:
        check_finite(before)
        with store_errors():
            gone = await self._purge_script(keys=self._queue_keys(), args=[repr(float(before))])
        return sorted(as_text(pid) for pid in gone)

    async def queued(self, player_id: str) -> QueueEntry | None:
        with store_errors():
            encoded = await self._client.hget(self._queue_key, player_id)
        return None if encoded is None else decode_entry(player_id, as_text(encoded))

    async def queue_entries(self, target: int | None = None) -> list[QueueEntry]:
        with store_errors():
            stored = await self._client.hgetall(self._queue_key)
        entries = [decode_entry(as_text(pid), as_text(enc)) for pid, enc in stored.items()]
        if target is not None:
            entries = [e for e in entries if e.target == target]
        return sorted(entries, key=lambda e: (e.joined_at, e.player_id))

    async def queue_names(self, player_ids: Iterable[str]) -> dict[str, str]:
        ids = list(dict.fromkeys(player_ids))
        if not ids:
            return {}
        with store_errors():
            names = await self._client.hmget(self._queue_names_key, ids)
        return {pid: as_text(n) for pid, n in zip(ids, names, strict=True) if n is not None}

    async def seat_tables(
        self,
        assignments: Sequence[Seating],
        *,
        expected: Mapping[str, QueueEntry] | None = None,
    ) -> list[bool]:
        check_seatings(assignments)
        if not assignments:
            return []
        wanted = expected or {}
        keys = [self._queue_key, self._queue_names_key, self._pending_key, self._queue_seen_key]
        args: list[str | int] = [max(1, math.ceil(self.assignment_ttl * 1000)), len(assignments)]
        for room_id, players in assignments:
            args += [room_id, len(players)]
            for pid in players:
                entry = wanted.get(pid)
                args += [pid, "" if entry is None else encode_entry(entry)]
                keys.append(self._key("assign", pid))
        with store_errors():
            seated = await self._seat_script(keys=keys, args=args)
        return [bool(s) for s in seated]

    async def take_assignment(self, player_id: str) -> str | None:
        with store_errors():
            room = await self._client.getdel(self._key("assign", player_id))
        return None if room is None else as_text(room)

    async def take_assignments(self, player_ids: Iterable[str]) -> dict[str, str]:
        ids = list(dict.fromkeys(player_ids))
        if not ids:
            return {}
        with store_errors():
            async with self._client.pipeline(transaction=False) as pipe:
                for pid in ids:
                    pipe.getdel(self._key("assign", pid))
                rooms = await pipe.execute()
        return {pid: room.decode() for pid, room in zip(ids, rooms, strict=True) if room}

    # Pending tables ----------------------------------------------------------------------------

    async def note_table(self, room_id: str, at: float) -> None:
        check_finite(at)
        with store_errors():
            await self._client.hset(self._pending_key, room_id, repr(float(at)))

    async def forget_table(self, room_id: str) -> None:
        with store_errors():
            await self._client.hdel(self._pending_key, room_id)

    async def take_stale_tables(self, before: float) -> list[str]:
        check_finite(before)
        with store_errors():
            stale = await self._stale_script(keys=[self._pending_key], args=[repr(float(before))])
        return sorted(as_text(room) for room in stale)

    async def close(self) -> None:
        await self._client.aclose()
