"""The asking node's side of the queue: ``Bots`` whose jobs any bot worker may take.

``decide`` adds a job to the queue's stream (XADD, trimmed to ``MAX_QUEUE`` entries) and waits
for its answer on this process's reply stream, read by one task (XREAD BLOCK) that hands each
answer to the job waiting for it. It waits no longer than the deadline counted from the ask:
then it plays the fallback itself and counts it, so a table never waits on the queue. An answer
that comes later finds nobody waiting and is dropped; a node that dies while waiting never reads
its answers (its reply stream expires), and the room's next tick, on any node, asks again with
the same seed and so gets the same move. A queue that cannot be reached costs the fallback at
once, never a stalled table.

Jobs asked together (a hand's passes, many tables at once) go in one pipeline on one connection.
The reader also samples the queue's length every second (``hearts_bot_queue_length``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError

from server.bots_queue.wire import ANSWER_FIELD, JOB_FIELD, QueueKeys, pack_job, read_answer
from server.core.bots.moves import Move
from server.ops import metrics
from server.play.bot_jobs import (
    DEADLINE_SECONDS,
    HINT_DEADLINE_SECONDS,
    Answer,
    Job,
    answered,
    hint_from,
    node_fallback,
    timed_out,
)
from server.store.redis.client.connect import Client

log = logging.getLogger(__name__)

MAX_QUEUE = 10_000  # jobs the stream keeps at most (MAXLEN ~): beyond, the oldest are dropped
READ_BLOCK_MS = 1000  # under the client's 2 s reply timeout
SAMPLE_EVERY = 1.0  # s between samples of the queue's length
RETRY_AFTER = 0.2  # s after a failed read of the reply stream


class QueuedBots:
    """``Bots`` on the Redis stream of bot jobs (``HEARTS_BOT_QUEUE=redis``)."""

    def __init__(
        self,
        client: Client,
        asker: str,
        *,
        keys: QueueKeys | None = None,
        deadline: float = DEADLINE_SECONDS,
        hint_deadline: float = HINT_DEADLINE_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.keys = keys or QueueKeys()
        # A stream of this process's own: a restarted node with the same id reads no answer
        # meant for its former self.
        self.reply = self.keys.reply(f"{asker}-{secrets.token_hex(4)}")
        self.deadline = deadline
        self.hint_deadline = hint_deadline
        self.clock = clock
        self.waiting: dict[str, asyncio.Future[Answer]] = {}
        self._ids = itertools.count(1)
        self._reader: asyncio.Task[None] | None = None
        self._wanted = asyncio.Event()  # set while a job waits: the reader reads
        self._outbox: list[tuple[bytes, asyncio.Future[Answer]]] = []  # jobs not yet sent
        self._to_send = asyncio.Event()
        self._sender: asyncio.Task[None] | None = None
        self._closing = False
        self._read_from = b"0-0"
        self._unavailable_logged = False

    # -- asking ---------------------------------------------------------------------------

    async def _ask(self, job: Job) -> Answer:
        """The job's answer; TimeoutError at its deadline, RedisError/OSError if the queue
        cannot be reached."""
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._read_answers())
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send_jobs())
        job_id = f"{next(self._ids)}"
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self.waiting[job_id] = future
        self._wanted.set()
        self._outbox.append((pack_job(job_id, self.reply, job), future))
        self._to_send.set()
        try:
            # Only the wait is cut short at the deadline: the job's XADD is the sender's, and
            # runs to its end (a redis-py command cancelled in flight can hang its connection).
            return await asyncio.wait_for(future, max(0.0, job.deadline - self.clock()))
        finally:
            del self.waiting[job_id]

    async def _send_jobs(self) -> None:
        """XADD every job asked since the last send, in one pipeline on one connection: many
        tables asking at once cost one round trip, never a connection each."""
        while self._outbox or not self._closing:
            if not self._outbox:
                self._to_send.clear()
                await self._to_send.wait()
                continue
            batch, self._outbox = self._outbox, []
            try:
                pipe = self.client.pipeline(transaction=False)
                for data, _ in batch:
                    pipe.xadd(self.keys.jobs, {JOB_FIELD: data}, maxlen=MAX_QUEUE, approximate=True)
                await pipe.execute()
            except Exception as e:  # RedisError, OSError: the queue is out of reach
                if not isinstance(e, (RedisError, OSError)):
                    log.exception("sending bot jobs failed")
                    e = RedisError(str(e))
                for _, future in batch:
                    if not future.done():
                        future.set_exception(e)

    async def decide(self, view: dict[str, Any], level: str, seed: int | None = None) -> Move:
        asked = self.clock()
        job = Job("decide", level, view, seed, asked, asked + self.deadline)
        try:
            answer = await self._ask(job)
        except TimeoutError:
            return timed_out(job, self.clock())
        except (RedisError, OSError) as e:
            self._unavailable(e)
            metrics.BOT_ANSWER.labels(level).observe(max(0.0, self.clock() - asked))
            return node_fallback(view, seed, level, "unavailable")
        return answered(job, answer, self.clock())

    async def hint(self, view: dict[str, Any], level: str = "strong") -> dict[str, Any]:
        asked = self.clock()
        job = Job("hint", level, view, None, asked, asked + self.hint_deadline)
        answer: Answer | None = None
        try:
            answer = await self._ask(job)
        except TimeoutError:
            pass
        except (RedisError, OSError) as e:
            self._unavailable(e)
        return await hint_from(job, answer)

    def _unavailable(self, error: BaseException) -> None:
        if not self._unavailable_logged:
            self._unavailable_logged = True
            log.warning("the bot queue cannot be reached (%s): bots play the fallback", error)

    # -- answers ------------------------------------------------------------------------------

    async def _read_answers(self) -> None:
        """Hand each answer on this process's reply stream to the job waiting for it; sample
        the queue's length now and then. Reads only while a job waits."""
        sampled = 0.0
        while not self._closing:
            try:
                if time.monotonic() - sampled >= SAMPLE_EVERY:
                    sampled = time.monotonic()
                    metrics.BOT_QUEUE_LENGTH.set(await self.client.xlen(self.keys.jobs))
                if not self.waiting:
                    self._wanted.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wanted.wait(), SAMPLE_EVERY)
                    continue
                reply: Any = await self.client.xread(
                    {self.reply: self._read_from}, count=256, block=READ_BLOCK_MS
                )
            except (RedisError, OSError) as e:
                self._unavailable(e)
                await asyncio.sleep(RETRY_AFTER)
                continue
            except Exception:  # never let the reader die: every job would wait its deadline
                log.exception("reading the bot queue's answers failed")
                await asyncio.sleep(RETRY_AFTER)
                continue
            self._unavailable_logged = False
            for _stream, entries in reply or ():
                for entry_id, fields in entries:
                    self._read_from = entry_id
                    self._deliver(fields.get(ANSWER_FIELD, b""))

    def _deliver(self, raw: bytes) -> None:
        try:
            job_id, answer = read_answer(raw)
        except ValueError:
            log.warning("an answer on the bot queue could not be read; its job falls back")
            return
        future = self.waiting.get(job_id)
        if future is not None and not future.done():
            future.set_result(answer)

    async def close(self) -> None:
        """Stop reading (the reader's blocked read ends within ``READ_BLOCK_MS``; a redis-py
        command is never cancelled in flight), send what is asked, and let the client go."""
        self._closing = True
        self._wanted.set()
        self._to_send.set()
        pending = [t for t in (self._reader, self._sender) if t is not None]
        if pending:
            await asyncio.wait(pending, timeout=READ_BLOCK_MS / 1000 + 1.0)
        with contextlib.suppress(RedisError, OSError):
            await self.client.aclose()
