"""Group commit: the calls of one script made within one turn of the event loop, in one pipeline.

Under load many rooms commit at the same moment: the sockets of one wake-up of the loop each
carry a card. Sent one by one, each commit is its own write to Redis and its own read of the
reply, and those writes were the node's second cost after the WebSocket sends. Batched, one
write and one read serve them all, the way ioredis's auto-pipelining does. A call alone in its
turn goes as it is, so an idle node adds no latency and no work.

Under load a turn's calls are few (a card is one socket's read), so a leader that finds nothing
in flight on a busy node waits ``WINDOW`` (1 ms) for others to join before it sends: fewer
round trips per card and less CPU per card on the node and on Redis, for about 1 ms more at the
median (docs/benchmarks.md). "Busy" is a rate (``LoadGauge``: ``BUSY_RATE`` calls a second
over the last tenth of a second or more), so a quiet node never waits.

One batch is in flight at a time to each server. Calls made while it is out wait for its
replies and then go together as the next batch, so batches grow with the load instead of each
turn's few calls paying a write and a read of their own. At low load nothing is in flight
and a call goes at once; under load a call waits at most one round trip more. The next batch
goes as soon as the replies are in, before their callers resume: sending it after them had the
node answer a whole batch's moves (their fan-out) while Redis sat idle, and slowed the commits.

A call's destination is chosen when it is made: its server's lane (``lane``: a raw
pipelined connection per server) or, for what the lanes do not carry, redis-py. Each
destination has its own batches, so a cluster primary that is slow, failing over or silent
holds up only the calls to its own slots: with one batch for all servers, a frozen primary
held every commit of the node until the reply timeout, and a dead one until the failover.

Each call keeps its own answer: a script's error reaches only its caller. A failed connection
reaches every caller of its batch, as it would have reached each alone; their outcome is
unknown, which the commit script's nonce resolves on a retry (``redis.rooms``); a lane's timeout
(a server that stopped answering) reaches them as the error it is, not retried. A leader
cancelled mid-call (the node is stopping) leaves its batch's outcome unknown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.store.redis.client.connect import Client
from server.store.redis.client.lane import HandOver, Lane, Lanes

MAX_BATCH = 256  # calls per pipeline; more wait for the next one
WINDOW = 0.001  # seconds a busy node's leader waits for others to join its batch
BUSY_RATE = 500.0  # calls a second: a 1 ms window then expects half a call to join it
Call = tuple[Sequence[str], Sequence[bytes | str | int], "asyncio.Future[object]"]


class LoadGauge:
    """Whether calls come at ``rate`` a second or faster, measured over slices of at least
    ``span`` seconds: judged afresh by the first question after each slice, so a node that went
    quiet is not busy by the time its next call asks."""

    __slots__ = ("_at", "_busy", "_calls", "rate", "span")

    def __init__(self, rate: float, span: float = 0.1) -> None:
        self.rate, self.span = rate, span
        self._at = 0.0  # the loop's clock starts far from 0: the first question judges
        self._calls = 0
        self._busy = False

    def busy(self, now: float, calls: int) -> bool:
        """``calls``: every call made so far, a running count."""
        elapsed = now - self._at
        if elapsed >= self.span:
            self._busy = calls - self._calls >= self.rate * elapsed
            self._at, self._calls = now, calls
        return self._busy


class _Flow:
    """The calls bound for one destination (a lane, that is one server; or redis-py): the
    batch the current turn's calls join, the batch out, and the leaders of the next one."""

    __slots__ = ("joining", "lane", "out", "waiting")

    def __init__(self, lane: Lane | None) -> None:
        self.lane = lane
        self.joining: list[Call] | None = None
        self.out: list[Call] | None = None
        self.waiting: list[asyncio.Future[None]] = []

    def idle(self) -> bool:
        return self.out is None and self.joining is None and not self.waiting


class ScriptBatcher:
    """``await batcher(keys, args)`` runs the script like ``script(keys=…, args=…)``.

    The first call of a turn to a destination leads: it yields once, so that the tasks woken
    with it can join, then sends the batch and hands each its answer. No task is made for it.
    """

    def __init__(
        self,
        client: Client,
        script: AsyncScript,
        *,
        lanes: bool | Lanes = True,
        window: float = WINDOW,
        busy_rate: float = BUSY_RATE,
    ) -> None:
        self._client = client
        self._script = script
        self._window = window
        self._load = LoadGauge(busy_rate)
        # Another batcher's lanes may be shared (that batcher closes them): one connection per
        # server carries every script.
        self._owns_lanes = lanes is True
        self._lanes = Lanes(client) if lanes is True else (lanes or None)
        self._flows: dict[Lane | None, _Flow] = {None: _Flow(None)}
        self._cluster = isinstance(client, RedisCluster)
        self.round_trips = 0  # pipelines and single calls sent (for tests and figures)
        self.calls = 0
        self.laned = 0  # calls sent on a lane
        # The loop of the first call: a batcher's connections belong to one loop anyway, and
        # asyncio.get_running_loop() costs a getpid() system call (CPython's fork check).
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __call__(self, keys: Sequence[str], args: Sequence[bytes | str | int]) -> object:
        loop = self._loop or self._first_loop()
        future: asyncio.Future[object] = loop.create_future()
        lane = self._lanes.ready(keys[0]) if self._lanes is not None else None
        flow = self._flows.get(lane) or self._new_flow(lane)
        if flow.joining is not None and len(flow.joining) < MAX_BATCH:
            flow.joining.append((keys, args, future))
            return await future
        batch = flow.joining = [(keys, args, future)]
        try:
            try:
                if flow.out is None:
                    if self._window and self._load.busy(loop.time(), self.calls):
                        await asyncio.sleep(self._window)  # a busy node: more calls join
                    else:
                        await asyncio.sleep(0)  # the other tasks of this turn run, and join
                while flow.out is not None:  # a batch is out: this one fills meanwhile
                    wake: asyncio.Future[None] = loop.create_future()
                    flow.waiting.append(wake)
                    await wake  # its own future: a cancelled wait cancels nothing shared
                flow.out = batch
            finally:
                if flow.joining is batch:
                    flow.joining = None
            await self._send(flow, batch)
        except BaseException as e:
            # The leader was cancelled, waiting or mid-call: nobody in its batch waits for ever.
            for _, _, waiting in batch:
                _settle(waiting, error=e)
            if not future.cancelled():
                future.exception()  # its own answer is this raise
            raise
        finally:
            _release(flow, batch)
        return await future

    def _first_loop(self) -> asyncio.AbstractEventLoop:
        self._loop = asyncio.get_running_loop()
        return self._loop

    def _new_flow(self, lane: Lane | None) -> _Flow:
        """A lane's first call; the flows of lanes since lost are dropped once idle."""
        for known, flow in list(self._flows.items()):
            if known is not None and known.lost and flow.idle():
                del self._flows[known]
        flow = self._flows[lane] = _Flow(lane)
        return flow

    @property
    def batches_out(self) -> int:
        """Batches sent whose replies are not all in (at most one per destination)."""
        return sum(flow.out is not None for flow in self._flows.values())

    @property
    def lanes(self) -> Lanes | None:
        """The raw connections its batches go on (None: redis-py alone); others may share them."""
        return self._lanes

    def close(self) -> None:
        if self._lanes is not None and self._owns_lanes:
            self._lanes.close()

    async def _send(self, flow: _Flow, batch: list[Call]) -> None:
        """Every call of ``batch`` gets its answer; only a cancellation escapes."""
        self.round_trips += 1
        self.calls += len(batch)
        lane = flow.lane
        if lane is None:
            await self._send_redis_py(batch)
            return
        sha = self._script.sha
        self.laned += len(batch)
        try:
            answers = await lane.call([("EVALSHA", sha, len(k), *k, *a) for k, a, _ in batch])
        except (RedisTimeoutError, RedisConnectionError) as e:
            _release(flow, batch)  # the next batch does not wait for redis-py's retries
            await asyncio.gather(*(self._one(*call) for call in self._lane_failed(lane, batch, e)))
            return
        _release(flow, batch)
        handed = _answer(batch, answers)
        if handed:
            await self._hand_over(lane, handed)

    async def _hand_over(self, lane: Lane, handed: list[tuple[Call, HandOver]]) -> None:
        """Calls whose reply was about the server. NOSCRIPT (a restarted or promoted server, a
        lane's first call of this script): sent again on the lane as EVAL, which caches the
        script there; redis-py's own script loading would wait out a cluster's slot-map
        refresh while another primary fails over. The rest is redis-py's."""
        unscripted: list[Call] = []
        rest: list[Call] = []
        for call, reply in handed:
            (unscripted if str(reply).startswith("NOSCRIPT") else rest).append(call)
        if unscripted:
            script = self._script.script
            body = script if isinstance(script, (str, bytes)) else bytes(script)
            try:
                answers = await lane.call(
                    [("EVAL", body, len(k), *k, *a) for k, a, _ in unscripted]
                )
            except (RedisTimeoutError, RedisConnectionError) as e:
                rest += self._lane_failed(lane, unscripted, e)
            else:
                rest += [call for call, _ in _answer(unscripted, answers)]
        for call in rest:  # one at a time: redis-py's first reload serves the rest
            await self._one(*call)

    def _lane_failed(self, lane: Lane, calls: list[Call], error: Exception) -> list[Call]:
        """``calls`` failed on ``lane``: the ones for redis-py to retry. A timeout (the server
        stopped answering) is their answer: redis-py would wait as long again on it, and the
        calls queued behind them meet the lane closed with the same error. A lost connection
        leaves their outcome unknown: redis-py retries them, and a commit's nonce makes a retry
        of one that was applied report its success."""
        assert self._lanes is not None
        self._lanes.failed(lane)
        if isinstance(error, RedisTimeoutError):
            for call in calls:
                _settle(call[2], error=error)
            return []
        return calls

    async def _send_redis_py(self, batch: list[Call]) -> None:
        if len(batch) == 1:
            await self._one(*batch[0])
            return
        if self._cluster:
            # Not redis-py's cluster pipeline: it waits for its slowest node (a failing one for
            # the whole failover), and on a connection error closes every connection of the
            # client, cutting off the calls in flight to the live primaries too.
            await asyncio.gather(*(self._one(*call) for call in batch))
            return
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for keys, args, _ in batch:
                    # execute_command: redis-py refuses pipe.evalsha on a cluster, not this.
                    pipe.execute_command("EVALSHA", self._script.sha, len(keys), *keys, *args)
                results = await pipe.execute(raise_on_error=False)
        except Exception as e:
            for _, _, future in batch:
                _settle(future, error=e)
            return
        for (keys, args, future), result in zip(batch, results, strict=True):
            if isinstance(result, NoScriptError):
                # A restarted or promoted server has an empty script cache: AsyncScript loads it.
                await self._one(keys, args, future)
            elif isinstance(result, Exception):
                _settle(future, error=result)
            else:
                _settle(future, result=result)

    async def _one(
        self, keys: Sequence[str], args: Sequence[bytes | str | int], future: asyncio.Future[object]
    ) -> None:
        try:
            result = await self._script(keys=keys, args=args)
        except Exception as e:
            _settle(future, error=e)
        else:
            _settle(future, result=result)


def _answer(calls: list[Call], answers: list[object]) -> list[tuple[Call, HandOver]]:
    """Settle each call with its reply from a lane; those handed over, with their reply, are
    left to the caller."""
    handed: list[tuple[Call, HandOver]] = []
    for call, answer in zip(calls, answers, strict=True):
        if isinstance(answer, HandOver):
            handed.append((call, answer))
        elif isinstance(answer, Exception):
            _settle(call[2], error=answer)
        else:
            _settle(call[2], result=answer)
    return handed


def _release(flow: _Flow, batch: list[Call]) -> None:
    """The batch out has its replies: the next to its destination may go. Called before its
    callers are answered, so the next leader, woken first, sends while they resume (its batch
    has gathered for a whole round trip; it does not wait another turn)."""
    if flow.out is not batch:
        return
    flow.out = None
    waiting, flow.waiting = flow.waiting, []
    for wake in waiting:
        if not wake.done():
            wake.set_result(None)


def _settle(
    future: asyncio.Future[object], *, result: object = None, error: BaseException | None = None
) -> None:
    if future.done():  # answered already, or its caller was cancelled
        return
    if isinstance(error, asyncio.CancelledError):
        # The leader was cancelled mid-call (the node is stopping): to the others, as to any
        # call cut off, the outcome is unknown. Never a cancellation of a task nobody cancelled.
        future.set_exception(RedisConnectionError("the batch's call was cut off"))
    elif error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
