"""A bot's work as a job: what the room asks, what answers it, and the cheaper answer when time
is short. Both ways of running bots share it: the node's own process pool
(``server.play.bot_pool``) and the bot workers behind a Redis stream (``server.bots_queue``).

A job carries the seat's view and nothing else of the game (``BotTurn.view``: what a human in
that seat would see), the level, the seed, when the room asked and its deadline. Whoever runs
it calls ``answer_job``: a job picked up too late to search is answered at once with the
fallback, a cheaper level's move (``FALLBACK_LEVEL``), as is one naming an unknown level or
whose search fails; a view nothing can be made of is answered with no move, and the node then
plays the fallback from its own copy of the view. The node never waits past the deadline
(``Bots``, below): the table moves by then, whatever the workers do.

>>> job = Job("decide", "basic", {"phase": "moon_choice"}, 7, asked=0.0, deadline=1e18)
>>> answer_job(job).move
('moon', 'others_26')
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from server.core.bots.levels import BOT_LEVELS
from server.core.bots.moves import Move, decision_to_move, random_move
from server.core.room.due import BotTurn
from server.ops import metrics

log = logging.getLogger(__name__)

# A search's hard bound: the budget (in card plays) takes tens of milliseconds on an idle core;
# on a loaded machine the search answers with its best so far once this much wall time is gone.
DECISION_SECONDS = 0.25
# From the room's ask to the move on the table, at most (HEARTS_BOT_DEADLINE): with the bot's
# think time before it and a tick's own few milliseconds after, no seat waits more than its
# think time plus a second, however long the queue.
DEADLINE_SECONDS = 0.8
HINT_DEADLINE_SECONDS = 3.0  # a hint: a person asked and waits for it
# A job with less time than this left is not searched: its fallback is answered at once.
MIN_SEARCH_SECONDS = 0.03
ANSWER_MARGIN = 0.01  # a search ends this long before the deadline: the answer's way back
FALLBACK_LEVEL = "basic"  # the policy bot: a tenth of a millisecond a move
LEVELS = frozenset(BOT_LEVELS) | {"random"}
KINDS = ("decide", "hint")


@dataclass(frozen=True, slots=True)
class Job:
    kind: str  # "decide" or "hint"
    level: str
    view: dict[str, Any]  # the seat's own view (game_view), never more
    seed: int | None
    asked: float  # wall clock (synchronized machines, as every deadline in the service)
    deadline: float


@dataclass(frozen=True, slots=True)
class Answer:
    move: Move | None = None  # decide: None when nothing could be made of the view
    hint: dict[str, Any] | None = None  # hint: None likewise
    fallback: str | None = None  # why the cheaper answer: late, unknown_level, error, bad_view
    started: float = 0.0  # wall clock when work on it began (the queue's wait ends)
    took: float = 0.0  # seconds of work


def decide_move(
    view: dict[str, Any], level: str, seed: int | None = None, seconds: float = DECISION_SECONDS
) -> Move:
    """One bot decision, its search cut short after ``seconds``."""
    if level == "random":
        return random_move(view, seed)
    from server.core.bots import decide

    ends = time.perf_counter() + seconds
    decision = decide(view, level, rng_seed=seed, stop=lambda: time.perf_counter() > ends)
    return decision_to_move(decision)


def hint_for(view: dict[str, Any], level: str) -> dict[str, Any]:
    """A hint for a human seat: the bot's choice and why."""
    from server.core.bots import hint

    answer = hint(view, level).to_dict()
    if answer["kind"] == "play":
        answer["card"] = answer["cards"][0]  # the wire's name for one card, as in `play`
    return answer


def fallback_move(view: dict[str, Any], seed: int | None) -> Move | None:
    """The cheaper level's move, else any legal one; None if the view allows neither."""
    try:
        return decide_move(view, FALLBACK_LEVEL, seed)
    except Exception:
        pass
    try:
        return random_move(view, seed)
    except Exception:
        return None


def fallback_hint(view: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return hint_for(view, FALLBACK_LEVEL)
    except Exception:
        return None


def answer_job(job: Job, clock: Callable[[], float] = time.time) -> Answer:
    """Do a job: search within its deadline, or answer the fallback at once. Never raises."""
    started = clock()
    began = time.perf_counter()
    left = job.deadline - started
    reason: str | None = None
    move: Move | None = None
    hint: dict[str, Any] | None = None
    if not isinstance(job.view, dict):
        reason = "bad_view"
    elif job.level not in LEVELS:
        reason = "unknown_level"
    elif left < MIN_SEARCH_SECONDS:
        reason = "late"
    else:
        try:
            if job.kind == "hint":
                hint = hint_for(job.view, job.level)
            else:
                seconds = min(DECISION_SECONDS, left - ANSWER_MARGIN)
                move = decide_move(job.view, job.level, job.seed, seconds)
        except Exception:
            reason = "error"
    if reason is not None and isinstance(job.view, dict):
        if job.kind == "hint":
            hint = fallback_hint(job.view)
        else:
            move = fallback_move(job.view, job.seed)
        if move is None and hint is None:
            reason = "bad_view"  # the cheaper answers fail too: nothing can be made of it
    return Answer(move, hint, reason, started, time.perf_counter() - began)


def warm_up() -> None:
    """Load the bots and pay their one-off costs, so a worker's first job is not its slowest."""
    from server.core.room.game_view import game_view
    from server.core.rules import Game, deal_from_deck

    game = Game()
    game.start_hand(deal_from_deck(list(range(52))))
    answer_job(Job("decide", "strong", game_view(game, 0), 0, 0.0, float("inf")))


_logged: set[str] = set()


def log_once(reason: str, level: str) -> None:
    """A bad answer's kind, logged the first time this process sees it."""
    if reason in ("error", "bad_view", "unknown_level") and reason not in _logged:
        _logged.add(reason)
        log.warning("a bot job (level %r) was answered by the fallback: %s", level, reason)


class Bots(Protocol):
    """What the room service asks of bots (``server.play.rooms``); the composition root
    (``server.app``) picks the node's own pool or the queue of bot workers."""

    async def decide(self, view: dict[str, Any], level: str, seed: int | None = None) -> Move:
        """The move for this seat's view, within the deadline counted from now."""
        ...

    async def hint(self, view: dict[str, Any], level: str = "strong") -> dict[str, Any]: ...

    async def close(self) -> None: ...


# -- the asking node's accounts ------------------------------------------------------------


def node_fallback(view: dict[str, Any], seed: int | None, level: str, reason: str) -> Move:
    """The fallback played by the node itself (the deadline passed, the queue is down, or the
    answer had no move), counted. Raises only if the view allows no move at all."""
    metrics.BOT_FALLBACKS.labels(reason).inc()
    move = fallback_move(view, seed)
    return move if move is not None else random_move(view, seed)


def answered(job: Job, answer: Answer, now: float) -> Move:
    """Count an answer that came in time, and the move it brings (the node's fallback if it
    brought none)."""
    metrics.BOT_QUEUE_WAIT.observe(max(0.0, answer.started - job.asked))
    metrics.BOT_SECONDS.labels(job.level).observe(answer.took)
    metrics.BOT_ANSWER.labels(job.level).observe(max(0.0, now - job.asked))
    if answer.fallback is not None:
        log_once(answer.fallback, job.level)
    if answer.move is None:
        return node_fallback(job.view, job.seed, job.level, answer.fallback or "bad_view")
    if answer.fallback is not None:
        metrics.BOT_FALLBACKS.labels(answer.fallback).inc()
    return answer.move


def timed_out(job: Job, now: float) -> Move:
    metrics.BOT_ANSWER.labels(job.level).observe(max(0.0, now - job.asked))
    return node_fallback(job.view, job.seed, job.level, "deadline")


async def hint_from(job: Job, answer: Answer | None) -> dict[str, Any]:
    """The hint an answer brings; else (no answer in time, or none made) the cheaper level's,
    made here off the event loop. Both counted."""
    if answer is not None:
        metrics.BOT_QUEUE_WAIT.observe(max(0.0, answer.started - job.asked))
        if answer.hint is not None:
            if answer.fallback is not None:
                metrics.HINT_FALLBACKS.labels(answer.fallback).inc()
            return answer.hint
    metrics.HINT_FALLBACKS.labels("deadline" if answer is None else "bad_view").inc()
    return await asyncio.to_thread(hint_for, job.view, FALLBACK_LEVEL)


async def ask_together(bots: Bots, turns: list[BotTurn]) -> dict[int, Move]:
    """The moves of bot seats due at once (a hand's passes), asked together: each within its
    own deadline from now, none waiting for another's answer."""
    moves = await asyncio.gather(*(bots.decide(t.view, t.level, t.seed) for t in turns))
    return {turn.seat: move for turn, move in zip(turns, moves, strict=True)}
