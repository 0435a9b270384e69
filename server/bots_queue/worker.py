"""A bot worker's loop: take a job, answer it, acknowledge it; one job at a time, one core.

Jobs come from the queue's stream through one consumer group (XREADGROUP). A job stays in the
group's pending list until its answer is written: the answer (XADD to the asker's reply stream,
trimmed, with an expiry) and the acknowledgement (XACK, XDEL) are one script in one slot, so a
job is answered and gone, or still pending. While a job runs, the worker renews its claim every
third of ``claim_idle`` (XCLAIM by itself, JUSTID); a worker killed in the middle stops renewing,
and after ``claim_idle`` any other worker takes the job (XAUTOCLAIM) and answers it: within its
deadline by searching, past it with the fallback at once. The asker uses whichever answer comes
first; a second one finds nobody waiting.

A job that cannot be read is answered with no move when it names its asker (the asker plays the
fallback from its own copy of the view), else dropped; either way the fault is logged once per
kind, and the worker goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError, ResponseError

from server.bots_queue.wire import GROUP, JOB_FIELD, BadJob, QueueKeys, pack_answer, read_job
from server.play.bot_jobs import Answer, Job, answer_job
from server.store.redis.client.connect import Client

log = logging.getLogger(__name__)

CLAIM_IDLE = 0.3  # s: a job not renewed this long belongs to a dead worker
CLAIM_EVERY = 0.1  # s between looks for such jobs while jobs keep coming
BLOCK_MS = 500  # a read waits this long for a job (so SIGTERM is seen within it)
REPLY_MAXLEN = 10_000  # answers a reply stream keeps (its reader takes them within ms)
REPLY_TTL_MS = 60_000  # a reply stream nobody reads (its asker died) is gone after this
STALE_CONSUMER_MS = 3_600_000  # a consumer idle this long with nothing pending is forgotten
RETRY_AFTER = 0.5  # s after Redis failed

# KEYS: the job stream, the reply stream (one slot: wire.QueueKeys). ARGV: group, entry id,
# answer bytes, reply MAXLEN, reply TTL (ms); an empty answer only acknowledges.
ANSWER_SCRIPT = """
if ARGV[3] ~= '' then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'a', ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return 1
"""


async def ensure_group(client: Client, keys: QueueKeys) -> None:
    """The workers' consumer group, from the stream's start (jobs added before it are served)."""
    try:
        await client.xgroup_create(keys.jobs, GROUP, id="0", mkstream=True)
    except ResponseError as e:
        if "BUSYGROUP" not in str(e):
            raise


class BotWorker:
    def __init__(
        self,
        client: Client,
        name: str,
        *,
        keys: QueueKeys | None = None,
        claim_idle: float = CLAIM_IDLE,
        block_ms: int = BLOCK_MS,
        run: Callable[[Job], Answer] = answer_job,
    ) -> None:
        self.client = client
        self.name = name  # the consumer's name in the group: unique per worker process
        self.keys = keys or QueueKeys()
        self.claim_idle = claim_idle
        self.block_ms = block_ms
        self.run_job = run
        self.stopping = False
        self.done: Counter[str] = Counter()  # answered, claimed, dropped, and fallbacks by kind
        self.logged: set[str] = set()
        self._next_claim = 0.0
        self._answer = client.register_script(ANSWER_SCRIPT)

    def stop(self) -> None:
        """Finish the job in hand (if any), then return from ``run``."""
        self.stopping = True

    async def start(self) -> None:
        await ensure_group(self.client, self.keys)
        with contextlib.suppress(RedisError):
            await self._forget_stale_consumers()

    async def run(self) -> None:
        await self.start()
        while not self.stopping:
            try:
                entry = await self._next()
            except (RedisError, OSError) as e:
                self._log_once("redis", f"Redis failed ({e}); retrying")
                await asyncio.sleep(RETRY_AFTER)
                continue
            if entry is not None:
                await self.handle(*entry)

    async def _next(self) -> tuple[bytes, dict[bytes, bytes]] | None:
        """A dead worker's job if one is due, else a new job, else None after ``block_ms``."""
        if time.monotonic() >= self._next_claim:
            reply: Any = await self.client.xautoclaim(
                self.keys.jobs, GROUP, self.name, int(self.claim_idle * 1000), "0-0", count=1
            )
            claimed = [(i, f) for i, f in reply[1] if f is not None]
            if claimed:
                self.done["claimed"] += 1
                return claimed[0]
            self._next_claim = time.monotonic() + CLAIM_EVERY
        read: Any = await self.client.xreadgroup(
            GROUP, self.name, {self.keys.jobs: ">"}, count=1, block=self.block_ms
        )
        for _stream, entries in read or ():
            for entry_id, fields in entries:
                return entry_id, fields
        return None

    async def handle(self, entry_id: bytes, fields: dict[bytes, bytes]) -> None:
        """Answer one job (or drop it) and acknowledge it."""
        try:
            job_id, reply, job = read_job(fields.get(JOB_FIELD, b""), self.keys)
        except BadJob as bad:
            self._log_once(bad.kind, f"a bot job could not be read ({bad.kind})")
            if bad.job_id is not None and bad.reply is not None:
                await self._finish(entry_id, bad.reply, bad.job_id, Answer(fallback="bad_job"))
            else:
                self.done["dropped"] += 1
                await self._finish(entry_id, self.keys.reply_prefix, None, None)
            return
        # Never cancelled mid-command (redis-py's asyncio connections can hang on a cancel in
        # flight): told to stop, the renewal ends after its command.
        searched = asyncio.Event()
        renew = asyncio.create_task(self._renew(entry_id, searched))
        try:
            answer = await asyncio.to_thread(self.run_job, job)
        finally:
            searched.set()
            await renew
        if answer.fallback is not None:
            self.done[answer.fallback] += 1
            if answer.fallback not in ("late",):
                self._log_once(answer.fallback, f"a bot job ({job.level!r}) got the fallback")
        await self._finish(entry_id, reply, job_id, answer)

    async def _finish(
        self, entry_id: bytes, reply: str, job_id: str | None, answer: Answer | None
    ) -> None:
        data = pack_answer(job_id, answer) if job_id is not None and answer is not None else b""
        try:
            await self._answer(
                keys=[self.keys.jobs, reply],
                args=[GROUP, entry_id, data, REPLY_MAXLEN, REPLY_TTL_MS],
            )
        except (RedisError, OSError) as e:
            # Still pending: another worker (or this one) takes it again after claim_idle.
            self._log_once("redis", f"Redis failed ({e}); the job will be taken again")
            return
        if data:
            self.done["answered"] += 1

    async def _renew(self, entry_id: bytes, searched: asyncio.Event) -> None:
        """Keep the job in hand from looking abandoned while its search runs."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(searched.wait(), self.claim_idle / 3)
                return
            with contextlib.suppress(RedisError, OSError):
                await self.client.xclaim(
                    self.keys.jobs, GROUP, self.name, 0, [entry_id], justid=True
                )

    async def _forget_stale_consumers(self) -> None:
        """Workers gone for an hour with nothing pending leave the group's list of consumers."""
        consumers: Any = await self.client.xinfo_consumers(self.keys.jobs, GROUP)
        for consumer in consumers:
            name, pending, idle = consumer["name"], consumer["pending"], consumer["idle"]
            if pending == 0 and idle > STALE_CONSUMER_MS:
                await self.client.xgroup_delconsumer(self.keys.jobs, GROUP, name)

    def _log_once(self, kind: str, message: str) -> None:
        if kind not in self.logged:
            self.logged.add(kind)
            log.warning("%s (logged once per kind)", message)
