"""Runs bot decisions off the event loop, in worker processes.

A bot is given exactly the view a human in its seat would get (``game_view``) and answers with a
move; the room then checks that move through the rules engine like any other. Searching bots
take tens of milliseconds of CPU, so they never run on the server's event loop.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

from server.core.bots.moves import Move, decision_to_move, random_move
from server.ops import metrics

log = logging.getLogger(__name__)

# A search's hard bound: the budget (in card plays) takes tens of milliseconds on an idle core;
# on a loaded machine the search answers with its best so far once this much wall time is gone.
DECISION_SECONDS = 0.25

def decide_move(
    view: dict[str, Any], level: str, seed: int | None = None, seconds: float = DECISION_SECONDS
) -> Move:
    """One bot decision (runs in a worker process), its search cut short after ``seconds``."""
    if level == "random":
        return random_move(view, seed)
    from server.core.bots import decide

    ends = time.perf_counter() + seconds
    decision = decide(view, level, rng_seed=seed, stop=lambda: time.perf_counter() > ends)
    return decision_to_move(decision)


def hint_for(view: dict[str, Any], level: str) -> dict[str, Any]:
    """A hint for a human seat (runs in a worker process): the bot's choice and why."""
    from server.core.bots import hint

    answer = hint(view, level).to_dict()
    if answer["kind"] == "play":
        answer["card"] = answer["cards"][0]  # the wire's name for one card, as in `play`
    return answer


class BotPool:
    def __init__(self, workers: int = 1, executor: Executor | None = None) -> None:
        # forkserver: workers do not inherit the event loop's threads and sockets by fork.
        context = multiprocessing.get_context("forkserver")
        self._executor = executor or (
            ProcessPoolExecutor(max_workers=workers, mp_context=context) if workers > 0 else None
        )

    async def decide(self, view: dict[str, Any], level: str, seed: int | None = None) -> Move:
        started = time.perf_counter()
        try:
            if self._executor is None:
                return decide_move(view, level, seed)
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._executor, decide_move, view, level, seed)
        except Exception:  # a bot bug must never stall a table: fall back to any legal move
            log.exception("bot %s failed; playing a random legal move", level)
            return random_move(view, seed)
        finally:
            metrics.BOT_SECONDS.labels(level).observe(time.perf_counter() - started)

    async def hint(self, view: dict[str, Any], level: str = "strong") -> dict[str, Any]:
        if self._executor is None:
            return hint_for(view, level)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, hint_for, view, level)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
