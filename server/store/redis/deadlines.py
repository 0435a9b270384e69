"""Claiming due rooms from the sharded deadline sets without asking every shard every pass.

Each of the ``SHARDS`` deadline sets lives in its own slot (see ``keys``). A scheduler
pass every 50 ms that asked all 64 would cost 1,280 script calls a second per node, nearly all
for nothing. Instead each store keeps a **hint per shard**: the earliest deadline it knows of.

- Its own commits lower the hint of their room's shard at once (``noted``), so a node that
  serves a room (routing makes that the common case) ticks it with no delay.
- Each claim returns the shard's earliest remaining deadline, which becomes the new hint.
- Every ``sweep_every`` seconds one pipelined read (``ZRANGE 0 0 WITHSCORES`` per shard; on a
  cluster one request per primary, in parallel) refreshes every hint, so deadlines set by
  other nodes (a room whose node died) are found at most that much later.

The reads go on the commits' lanes (``client.lane``) where one is open, redis-py carrying the rest:
through a redis-py pipeline the sweep of 64 shards, four times a second, was a visible cost of a
loaded node and nearly all of an idle one's (docs/benchmarks.md).

A pass claims only the shards whose hint is due. When several are, it first peeks at each
(one pipelined read) and claims the earliest ``limit`` rooms overall, so ``claim_due`` still
takes the earliest first across shards, as the store contract says.

A pass waits ``PATIENCE`` for each read and claim, not for the slowest shard: on a cluster whose
primary fails over (or stops answering), the rooms on the other primaries keep their clocks and
their bots. Waiting for every shard, a pass took the failover's length (seconds; more with
Redis's default node timeout), and every clock of the node waited too.
"""

from __future__ import annotations

import asyncio
import functools
import math
from asyncio import FIRST_COMPLETED
from collections.abc import Callable, Sequence
from typing import Any, cast

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store.redis.client.batching import ScriptBatcher
from server.store.redis.client.connect import Client, store_errors
from server.store.redis.client.lane import Command, Lane, Lanes
from server.store.redis.keys import SHARDS, RoomKeys
from server.store.rooms import StoreUnavailable

SWEEP_EVERY = 0.25
"""Seconds between two full reads of every shard's earliest deadline."""

PATIENCE = 0.25
"""Seconds a pass waits for a shard's claim, and for a shard's read once another has answered:
a slow or failing primary (a failover, a frozen server) must not hold up the clocks of the rooms
on the others. A claim still running then is not cut off (it leases rooms): a later pass returns
what it claimed."""


def _score(raw: Any) -> float:
    return math.inf if raw is None or raw is False else float(raw)


def _with_scores(reply: list[Any]) -> list[tuple[bytes, float]]:
    """A raw ``WITHSCORES`` reply (member, score, member, score…) as redis-py gives it."""
    return [(reply[i], float(reply[i + 1])) for i in range(0, len(reply), 2)]


async def _pipelined(client: Any, keys: list[str], read: Callable[[Any, str], Any]) -> list[Any]:
    with store_errors():
        async with client.pipeline(transaction=False) as pipe:
            for key in keys:
                read(pipe, key)
            return list(await pipe.execute())


async def _one_read(client: Any, key: str, read: Callable[[Any, str], Any]) -> list[Any]:
    with store_errors():
        return [await read(client, key)]


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
        # claim_due.lua, on the lanes where open: each server's claims apart from the others',
        # and from redis-py's slot-map refresh while a primary fails over (claims through
        # redis-py to live primaries waited out that refresh).
        self._claims = ScriptBatcher(client, claim_script, lanes=lanes or False)
        self.sweep_every = sweep_every
        self._hints = [math.inf] * SHARDS
        self._swept_at = -math.inf
        self._claiming: set[int] = set()  # shards whose claim of an earlier pass still runs
        self._late: list[str] = []  # rooms those claims leased, for the next pass

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
        client allows; None for a shard that did not answer within ``PATIENCE`` of the first
        one that did. ``raw(key)`` is the same read as a command for a lane, whose
        ``WITHSCORES`` reply is paired here as redis-py pairs it. A lane whose connection is
        lost, or a reply about the slot rather than the read (MOVED), hands its shards to
        redis-py within the same patience; a lane that timed out does not (the server is
        silent, not gone). Raises StoreUnavailable when no shard answered at all.
        """
        keys = [self._keys.deadlines(shard) for shard in shards]
        answers: list[Any] = [None] * len(keys)
        if not keys:
            return answers
        reads: dict[asyncio.Future[Any], tuple[Lane | None, list[int]]] = {}
        rest = list(range(len(keys)))
        if self._lanes is not None:
            rest = []
            routed: dict[Lane, list[int]] = {}
            for i, key in enumerate(keys):
                lane = self._lanes.ready(key)
                if lane is None:
                    rest.append(i)
                else:
                    routed.setdefault(lane, []).append(i)
            for lane, where in routed.items():
                reads[lane.call([raw(keys[i]) for i in where])] = (lane, where)
        self._read_redis_py(keys, rest, read, reads)
        loop = asyncio.get_running_loop()
        until: float | None = None  # the first answer starts the patience for the rest
        answered = 0
        error: BaseException | None = None
        while reads:
            left = None if until is None else until - loop.time()
            if left is not None and left <= 0:
                break
            done, _ = await asyncio.wait(reads, timeout=left, return_when=FIRST_COMPLETED)
            for read_done in done:
                lane, where = reads.pop(read_done)
                failure = read_done.exception()  # none is cancelled before the loop ends
                if failure is not None:
                    if lane is not None and self._lanes is not None:
                        self._lanes.failed(lane)
                        if not isinstance(failure, RedisTimeoutError):
                            # Lost: redis-py reads these shards. Silent: it would only wait
                            # as long again on the same server (the commits' rule too).
                            self._read_redis_py(keys, where, read, reads)
                            continue
                    error = failure
                    continue
                handed: list[int] = []
                for i, reply in zip(where, read_done.result(), strict=True):
                    if isinstance(reply, BaseException):
                        if lane is not None:
                            handed.append(i)  # a moved slot, say: redis-py's
                        continue
                    answers[i] = _with_scores(reply) if lane is not None else reply
                    answered += 1
                    if lane is not None:
                        self.laned_reads += 1
                self._read_redis_py(keys, handed, read, reads)
            if answered and until is None:
                until = loop.time() + PATIENCE
        for slow in reads:
            slow.cancel()  # only reads: nothing is left half done
        if not answered:
            raise StoreUnavailable("no deadline shard answered") from error
        return answers

    def _read_redis_py(
        self,
        keys: list[str],
        which: list[int],
        read: Callable[[Any, str], Any],
        reads: dict[asyncio.Future[Any], tuple[Lane | None, list[int]]],
    ) -> None:
        """Start the reads of ``which`` through redis-py. One Redis: one pipeline. A cluster:
        one command per shard, to its primary, not redis-py's cluster pipeline, which on a
        connection error closes every connection of the client (cutting off the commits in
        flight to the live primaries too); and a shard whose primary is failing over leaves
        the others readable."""
        if not which:
            return
        if isinstance(self._client, RedisCluster):
            for i in which:
                reads[asyncio.ensure_future(_one_read(self._client, keys[i], read))] = (None, [i])
            return
        reads[asyncio.ensure_future(_pipelined(self._client, [keys[i] for i in which], read))] = (
            None,
            which,
        )

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
            reply = await self._claims(
                [self._keys.deadlines(shard)], [repr(float(up_to)), count, repr(float(lease_end))]
            )
        rooms, first = cast(list[Any], reply)
        self._hints[shard] = _score(first)
        return list(rooms)

    async def claim(self, now: float, limit: int, lease: float, clock: float) -> list[str]:
        """Up to ``limit`` rooms due at ``now``, earliest first; ``clock`` paces the sweeps.
        Rooms that a slow shard's claim of an earlier pass leased since come first."""
        late, self._late = self._late, []
        if limit <= 0:
            return late
        if clock - self._swept_at >= self.sweep_every:
            await self._sweep(clock)
        due = [
            shard
            for shard in range(SHARDS)
            if self._hints[shard] <= now and shard not in self._claiming
        ]
        if not due:
            return late
        plan: dict[int, tuple[float, int]] = {}
        order: dict[bytes, float] = {}
        if len(due) == 1:
            plan[due[0]] = (now, limit)
        else:
            earliest = (await self._peek(due, now, limit))[:limit]
            for score, shard, room in earliest:  # sorted: a shard's last row is its cutoff
                plan[shard] = (score, plan.get(shard, (score, 0))[1] + 1)
                order[room] = score
            for shard in due:
                if not any(True for _, s, _r in earliest if s == shard) and len(earliest) < limit:
                    # Nothing due after all (another node claimed it): the next sweep says when.
                    self._hints[shard] = math.inf
            if not plan:
                return late
        claims = {
            shard: asyncio.ensure_future(self._claim_shard(shard, cutoff, count, now + lease))
            for shard, (cutoff, count) in plan.items()
        }
        self._claiming.update(claims)
        _, slow = await asyncio.wait(claims.values(), timeout=PATIENCE)
        claimed: list[bytes] = []
        failures: list[BaseException] = []
        for shard, task in claims.items():
            if task in slow:
                # Not cut off (it leases rooms): what it claims goes out with the next pass.
                task.add_done_callback(functools.partial(self._claimed_late, shard))
                continue
            self._claiming.discard(shard)
            failure = task.exception()
            if failure is not None:
                failures.append(failure)
            else:
                claimed.extend(task.result())
        if failures and not claimed and not slow and not late:
            raise failures[0]  # every shard failed: the store is down
        # A shard failing over does not stop the others' clocks.
        claimed.sort(key=lambda room: order.get(room, now))
        return late + [room.decode() for room in claimed]

    def _claimed_late(self, shard: int, task: asyncio.Future[list[bytes]]) -> None:
        self._claiming.discard(shard)
        if task.cancelled() or task.exception() is not None:
            return  # its rooms stay due (or leased, and due again when the lease ends)
        self._late.extend(room.decode() for room in task.result())

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
