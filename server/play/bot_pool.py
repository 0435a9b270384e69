"""Runs bot decisions off the event loop, in this node's own worker processes.

The embedded node's way (and a Redis node's with ``HEARTS_BOT_WORKERS`` > 0 and no queue of bot
workers): each decision is a job (``server.play.bot_jobs``) run by a process of the pool. A bot
is given exactly the view a human in its seat would get (``game_view``) and answers with a move;
the room then checks that move through the rules engine like any other. Searching bots take tens
of milliseconds of CPU, so they never run on the server's event loop.

The deadline is counted from the room's ask: a job still waiting for a process then is dropped
from the pool's queue and the node plays the fallback at once (counted); a process that takes a
job too late to search answers the fallback itself.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

from server.core.bots.moves import Move
from server.ops import metrics
from server.play.bot_jobs import (
    DEADLINE_SECONDS,
    HINT_DEADLINE_SECONDS,
    Answer,
    Job,
    answer_job,
    answered,
    hint_from,
    timed_out,
    warm_up,
)


class BotPool:
    """``Bots`` on a process pool; with ``workers=0`` every job runs inline (tests, tools)."""

    def __init__(
        self,
        workers: int = 1,
        executor: Executor | None = None,
        *,
        deadline: float = DEADLINE_SECONDS,
        hint_deadline: float = HINT_DEADLINE_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        # forkserver: workers do not inherit the event loop's threads and sockets by fork.
        context = multiprocessing.get_context("forkserver")
        self._executor = executor or (
            ProcessPoolExecutor(max_workers=workers, mp_context=context) if workers > 0 else None
        )
        if executor is None and self._executor is not None:
            for _ in range(workers):  # the processes start now and load the bots once
                self._executor.submit(warm_up)
        self.deadline = deadline
        self.hint_deadline = hint_deadline
        self.clock = clock
        self.waiting = 0  # jobs asked and not answered

    async def _run(self, job: Job) -> Answer:
        """The job's answer; TimeoutError at its deadline."""
        if self._executor is None:
            return answer_job(job, self.clock)
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor, answer_job, job)
        self.waiting += 1
        metrics.BOT_QUEUE_LENGTH.set(self.waiting)
        try:
            # On timeout the pool's future is cancelled: a job no process took yet is dropped.
            return await asyncio.wait_for(future, max(0.0, job.deadline - self.clock()))
        finally:
            self.waiting -= 1
            metrics.BOT_QUEUE_LENGTH.set(self.waiting)

    async def decide(self, view: dict[str, Any], level: str, seed: int | None = None) -> Move:
        asked = self.clock()
        job = Job("decide", level, view, seed, asked, asked + self.deadline)
        try:
            answer = await self._run(job)
        except TimeoutError:
            return timed_out(job, self.clock())
        return answered(job, answer, self.clock())

    async def hint(self, view: dict[str, Any], level: str = "strong") -> dict[str, Any]:
        asked = self.clock()
        job = Job("hint", level, view, None, asked, asked + self.hint_deadline)
        try:
            answer: Answer | None = await self._run(job)
        except TimeoutError:
            answer = None
        return await hint_from(job, answer)

    async def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
