"""Bots as jobs: the deadline counted from the room's ask, the cheaper move when time is short
(counted), a hand's passes asked together, and answers that never crash the asker."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from protocol.shuffle import deal_context, seat_commitment
from server.core.bots.moves import Move
from server.core.room.commands import CommitSecret, Connect, FillBots, Join, RevealSecret, Start
from server.core.room.due import BOT_MOVES_PER_TICK, BotTurn, due, due_bots
from server.core.room.game_view import game_view
from server.core.room.state import Clocks, TableOptions
from server.core.rules import Game, Rules, deal_from_deck
from server.ops import metrics
from server.play.bot_jobs import Job, answer_job, decide_move, fallback_move
from server.play.bot_pool import BotPool
from server.play.rooms import RoomService
from server.store import MemoryRoomStore
from tests.support.room_driver import Driver


def counted(name: str, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


def fallbacks(reason: str) -> float:
    return counted("hearts_bot_fallback_moves_total", reason=reason)


def passing_view(seat: int = 0) -> dict[str, Any]:
    """A seat about to pass, in a deal where strong's pass is not basic's."""
    deck = list(range(52))
    random.Random(1).shuffle(deck)
    game = Game(Rules())
    game.start_hand(deal_from_deck(deck))
    return game_view(game, seat)


# -- answering a job --------------------------------------------------------------------------


def test_a_job_in_time_is_the_levels_own_move() -> None:
    view = passing_view()
    job = Job("decide", "strong", view, 7, time.time(), time.time() + 5)
    answer = answer_job(job)
    assert answer.fallback is None and answer.move == decide_move(view, "strong", 7)
    assert answer.move != fallback_move(view, 7)  # strong prices its pass: not basic's here
    assert answer.took > 0 and answer.started >= job.asked


def test_a_job_past_its_deadline_gets_the_cheaper_move_at_once() -> None:
    view = passing_view()
    job = Job("decide", "strong", view, 7, time.time() - 2, time.time() - 1)
    answer = answer_job(job)
    assert answer.fallback == "late" and answer.move == fallback_move(view, 7)
    assert answer.took < 0.05  # no search was started


def test_an_unknown_level_or_a_view_nothing_can_be_made_of_never_raises() -> None:
    view = passing_view()
    now = time.time()
    unknown = answer_job(Job("decide", "grandmaster", view, 1, now, now + 5))
    assert unknown.fallback == "unknown_level" and unknown.move == fallback_move(view, 1)
    for bad in ({"phase": "playing"}, {"x": 1}, "not a view", {"phase": "passing", "hand": 3}):
        answer = answer_job(Job("decide", "strong", bad, 1, now, now + 5))  # type: ignore[arg-type]
        assert answer.fallback in ("bad_view", "error")
        hinted = answer_job(Job("hint", "strong", bad, 1, now, now + 5))  # type: ignore[arg-type]
        assert hinted.hint is None and hinted.fallback == "bad_view"


# -- the node's own pool ----------------------------------------------------------------------


class SlowExecutor(ThreadPoolExecutor):
    """One thread that takes ``delay`` seconds before each job: a pool with a queue."""

    def __init__(self, delay: float) -> None:
        super().__init__(max_workers=1)
        self.delay = delay
        self.ran = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        def slow() -> Any:
            self.ran += 1
            time.sleep(self.delay)
            return fn(*args, **kwargs)

        return super().submit(slow)


async def test_the_pool_never_waits_past_the_deadline_and_counts_the_fallback() -> None:
    executor = SlowExecutor(0.5)
    pool = BotPool(executor=executor, deadline=0.2)
    view = passing_view()
    before = fallbacks("deadline")
    started = time.perf_counter()
    moves = await asyncio.gather(*(pool.decide(view, "strong", s) for s in range(3)))
    waited = time.perf_counter() - started
    assert waited < 0.35, "a table waited past the deadline"
    assert moves == [fallback_move(view, s) for s in range(3)]
    assert fallbacks("deadline") == before + 3
    await asyncio.sleep(0.6)
    assert executor.ran == 1, "jobs no process had taken were not dropped at the deadline"
    await pool.close()
    executor.shutdown(wait=True)


async def test_the_pool_answers_in_time_with_the_levels_move_and_measures_it() -> None:
    pool = BotPool(executor=ThreadPoolExecutor(max_workers=1), deadline=5.0)
    view = passing_view()
    answers = counted("hearts_bot_answer_seconds_count", level="strong")
    before = fallbacks("deadline")
    move = await pool.decide(view, "strong", 3)
    assert move == decide_move(view, "strong", 3)
    assert counted("hearts_bot_answer_seconds_count", level="strong") == answers + 1
    assert fallbacks("deadline") == before
    await pool.close()


async def test_a_hint_past_its_deadline_is_the_cheaper_levels() -> None:
    executor = SlowExecutor(0.5)
    pool = BotPool(executor=executor, hint_deadline=0.1)
    before = counted("hearts_hint_fallbacks_total", reason="deadline")
    hint = await pool.hint(passing_view(), "strong")
    assert hint["kind"] == "pass" and len(hint["cards"]) == 3
    assert counted("hearts_hint_fallbacks_total", reason="deadline") == before + 1
    await pool.close()
    executor.shutdown(wait=True)


# -- a tick asks a hand's passes together -----------------------------------------------------


def _bots_passing() -> Driver:
    d = Driver(clocks=Clocks(bot_think=0.0, between_hands=0.0))
    d.do(Connect("p0", "c0"))
    d.do(FillBots("p0"))
    d.do(Start("p0"))
    d.settle_shuffle()
    return d


def test_due_bots_are_every_seat_deciding_now_first_as_due_gives_it() -> None:
    d = _bots_passing()
    turns = due_bots(d.state, d.now, 0)
    assert [t.seat for t in turns] == [1, 2, 3]
    assert turns[0] == due(d.state, d.now, 0)
    assert all(isinstance(t, BotTurn) and t.view["seat"] == t.seat for t in turns)
    assert len(due_bots(d.state, d.now, BOT_MOVES_PER_TICK - 2)) == 2  # the tick's bound
    assert due_bots(d.state, d.now - 1, 0) == []  # their think time is not over yet


class CountingBots:
    """Bots that take 0.1 s a decision and note how many were asked at once."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.asked: list[int] = []

    async def decide(self, view: dict[str, Any], level: str, seed: int | None = None) -> Move:
        self.now += 1
        self.most = max(self.most, self.now)
        self.asked.append(view["seat"])
        await asyncio.sleep(0.1)
        self.now -= 1
        move = fallback_move(view, seed)
        assert move is not None
        return move

    async def hint(self, view: dict[str, Any], level: str = "strong") -> dict[str, Any]:
        raise NotImplementedError

    async def close(self) -> None:
        pass


async def test_a_tick_asks_a_hands_passes_together_and_makes_every_one() -> None:
    bots = CountingBots()
    rooms = RoomService(MemoryRoomStore(), bots)
    options = TableOptions(rules=Rules(50), clocks=Clocks(bot_think=0.0, between_hands=0.0))
    state = await rooms.create(kind="friends", host="p0", host_name="P0", options=options)
    room = state.id
    await rooms.apply(room, Join("p0", "P0", "n/p0"))
    await rooms.apply(room, Connect("p0", "n/p0"))
    await rooms.apply(room, FillBots("p0"))
    state, _ = await rooms.apply(room, Start("p0"))
    sh = state.shuffle
    assert sh is not None
    secret = bytes([1]) * 32
    commitment = seat_commitment(deal_context(state.game_id, sh["hand"]), 0, secret)
    await rooms.apply(room, CommitSecret("p0", commitment))
    await rooms.apply(room, RevealSecret("p0", secret))
    started = time.perf_counter()
    await rooms.tick(room)
    assert time.perf_counter() - started < 0.25  # three decisions of 0.1 s, side by side
    assert bots.most == 3 and sorted(bots.asked) == [1, 2, 3]
    after = await rooms.load(room)
    assert after is not None and after.game is not None and after.game.hand is not None
    assert all(after.game.hand.passes[s] for s in (1, 2, 3))
