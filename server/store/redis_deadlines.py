"""Claiming due rooms from the sharded deadline sets without asking every shard every pass.

Each of the ``SHARDS`` deadline sets lives in its own slot (see ``redis_keys``). A scheduler
pass every 50 ms that asked all 64 would cost 1,280 script calls a second per node, nearly all
for nothing. Instead each store keeps a **hint per shard**: the earliest deadline it knows of.

- Its own commits lower the hint of their room's shard at once (``noted``), so a node that
  serves a room (routing makes that the common case) ticks it with no delay.
- Each claim returns the shard's earliest remaining deadline, which becomes the new hint.
- Every ``sweep_every`` seconds one pipelined read (``ZRANGE 0 0 WITHSCORES`` per shard; on a
  cluster one request per primary, in parallel) refreshes every hint, so deadlines set by
  other nodes (a room whose node died) are found at most that much later.

The reads go on the commits' lanes (``redis_lane``) where one is open, redis-py carrying the rest:
through a redis-py pipeline the sweep of 64 shards, four times a second, was 2.4 % of a node's
CPU under the paced load (py-spy, 1,200 tables), and nearly all of a node's CPU at idle.

A pass claims only the shards whose hint is due. When several are, it first peeks at each
(one pipelined read) and claims the earliest ``limit`` rooms overall, so ``claim_due`` still
takes the earliest first across shards, as the store contract says.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store.redis_client import Client, store_errors
from server.store.redis_keys import SHARDS, RoomKeys
from server.store.redis_lane import Command, Lane, Lanes

SWEEP_EVERY = 0.25
"""Seconds between two full reads of every shard's earliest deadline."""

_UNREAD = object()  # a shard no lane answered for: redis-py reads it


def _score(raw: Any) -> float:
    return math.inf if raw is None or raw is False else float(raw)


def _with_scores(reply: list[Any]) -> list[tuple[bytes, float]]:
    """A raw ``WITHSCORES`` reply (member, score, member, score…) as redis-py gives it."""
    return [(reply[i], float(reply[i + 1])) for i in range(0, len(reply), 2)]


class ShardedDeadlines:
    def __init__(
        self,
        client: Client,
        keys: RoomKeys,
        claim_script: Any,
        *,
        lanes: Lanes | None = None,
        sweep_every: float = SWEEP_EVERY,
    ) -> None:
        self._client = client
        self._lanes = lanes
        self.laned_reads = 0  # shards read on a lane (for tests)
        self._keys = keys
        self._claim = claim_script  # an AsyncScript (claim_due.lua)
        self.sweep_every = sweep_every
        self._hints = [math.inf] * SHARDS
        self._swept_at = -math.inf

    def noted(self, shard: int, deadline: float | None) -> None:
        """A commit through this store set ``deadline`` in ``shard``."""
        if deadline is not None and deadline < self._hints[shard]:
            self._hints[shard] = deadline

    def forget_hints(self) -> None:
        """Deadlines moved behind our back (an outage shift): read every shard next time."""
        self._swept_at = -math.inf

    async def _read_shards(
        self,
        shards: Sequence[int],
        read: Callable[[Any, str], Any],
        raw: Callable[[str], Command],
    ) -> list[Any]:
        """``read(client, key)`` on each shard's deadline set, in as few round trips as the
        client allows; None for a shard that did not answer. ``raw(key)`` is the same read as
        a command for a lane, whose ``WITHSCORES`` reply is paired here as redis-py pairs it.
        """
        keys = [self._keys.deadlines(shard) for shard in shards]
        answers: list[Any] = [_UNREAD] * len(keys)
        if self._lanes is not None:
            await self._read_on_lanes(self._lanes, keys, raw, answers)
        rest = [i for i, answer in enumerate(answers) if answer is _UNREAD]
        if rest:
            got = await self._read_redis_py([keys[i] for i in rest], read)
            for i, answer in zip(rest, got, strict=True):
                answers[i] = answer
        return answers

    async def _read_on_lanes(
        self, lanes: Lanes, keys: list[str], raw: Callable[[str], Command], answers: list[Any]
    ) -> None:
        """Fill ``answers`` for the keys an open lane serves; a failed one is left unread."""
        routed: dict[Lane, list[int]] = {}
        for i, key in enumerate(keys):
            lane = lanes.ready(key)
            if lane is not None:
                routed.setdefault(lane, []).append(i)
        sent = [
            (lane, where, lane.call([raw(keys[i]) for i in where]))
            for lane, where in routed.items()
        ]
        for lane, where, replies in sent:
            try:
                got = await replies
            except (RedisConnectionError, RedisTimeoutError):
                lanes.failed(lane)  # redis-py reads these shards
                continue
            for i, reply in zip(where, got, strict=True):
                if not isinstance(reply, Exception):  # a moved slot, say: redis-py's
                    answers[i] = _with_scores(reply)
                    self.laned_reads += 1

    async def _read_redis_py(self, keys: list[str], read: Callable[[Any, str], Any]) -> list[Any]:
        """One Redis: one pipeline. A cluster: concurrent commands, each to its shard's primary,
        not redis-py's cluster pipeline, which on a connection error closes every connection
        of the client (cutting off the commits in flight to the live primaries too); and a
        shard whose primary is failing over leaves the others readable.
        """
        if not isinstance(self._client, RedisCluster):
            with store_errors():
                async with self._client.pipeline(transaction=False) as pipe:
                    for key in keys:
                        read(pipe, key)
                    return list(await pipe.execute())
        with store_errors():
            answers = await asyncio.gather(
                *(read(self._client, key) for key in keys), return_exceptions=True
            )
        if all(isinstance(a, BaseException) for a in answers):
            with store_errors():
                raise answers[0]  # nothing answered: the store is down, say so
        return [None if isinstance(a, BaseException) else a for a in answers]

    async def _sweep(self, now: float) -> None:
        firsts = await self._read_shards(
            range(SHARDS),
            lambda c, key: c.zrange(key, 0, 0, withscores=True),
            lambda key: ("ZRANGE", key, 0, 0, "WITHSCORES"),
        )
        for shard, first in enumerate(firsts):
            if first is not None:  # a shard that did not answer keeps its hint
                self._hints[shard] = _score(first[0][1]) if first else math.inf
        self._swept_at = now

    async def _peek(
        self, shards: Sequence[int], now: float, limit: int
    ) -> list[tuple[float, int, bytes]]:
        found = await self._read_shards(
            shards,
            lambda c, key: c.zrangebyscore(key, "-inf", now, 0, limit, withscores=True),
            lambda key: (
                "ZRANGEBYSCORE",
                key,
                "-inf",
                repr(float(now)),
                "WITHSCORES",
                "LIMIT",
                0,
                limit,
            ),
        )
        return sorted(
            (float(score), shard, room)
            for shard, rows in zip(shards, found, strict=True)
            for room, score in rows or []
        )

    async def _claim_shard(
        self, shard: int, up_to: float, count: int, lease_end: float
    ) -> list[bytes]:
        with store_errors():
            rooms, first = await self._claim(
                keys=[self._keys.deadlines(shard)],
                args=[repr(float(up_to)), count, repr(float(lease_end))],
            )
        self._hints[shard] = _score(first)
        return list(rooms)

    async def claim(self, now: float, limit: int, lease: float, clock: float) -> list[str]:
        """Up to ``limit`` rooms due at ``now``, earliest first; ``clock`` paces the sweeps."""
        if limit <= 0:
            return []
        if clock - self._swept_at >= self.sweep_every:
            await self._sweep(clock)
        due = [shard for shard in range(SHARDS) if self._hints[shard] <= now]
        if not due:
            return []
        if len(due) == 1:
            return [r.decode() for r in await self._claim_shard(due[0], now, limit, now + lease)]
        earliest = (await self._peek(due, now, limit))[:limit]
        plan: dict[int, tuple[float, int]] = {}
        order: dict[bytes, float] = {}
        for score, shard, room in earliest:  # sorted: a shard's last row is its cutoff
            plan[shard] = (score, plan.get(shard, (score, 0))[1] + 1)
            order[room] = score
        for shard in due:
            if not any(True for _, s, _r in earliest if s == shard) and len(earliest) < limit:
                # Nothing due after all (another node claimed it): the next sweep says when.
                self._hints[shard] = math.inf
        if not plan:
            return []
        claims = await asyncio.gather(
            *(
                self._claim_shard(shard, cutoff, count, now + lease)
                for shard, (cutoff, count) in plan.items()
            ),
            return_exceptions=True,
        )
        answered = [rooms for rooms in claims if not isinstance(rooms, BaseException)]
        if not answered:
            raise claims[0]  # type: ignore[misc]  # every shard failed: the store is down
        # A shard failing over does not stop the others' clocks.
        claimed = [room for rooms in answered for room in rooms]
        claimed.sort(key=lambda room: order.get(room, now))
        return [room.decode() for room in claimed]

    async def shift(self, delta: float, shift_script: Any) -> int:
        """Add ``delta`` to every deadline, shard by shard (each shard atomically)."""
        moved = 0
        for shard in range(SHARDS):
            with store_errors():
                moved += int(
                    await shift_script(keys=[self._keys.deadlines(shard)], args=[repr(delta)])
                )
        self.forget_hints()
        return moved
