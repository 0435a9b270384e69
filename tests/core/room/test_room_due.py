"""What a tick fetches from outside the room (``server.core.room.due``), without sockets."""

from __future__ import annotations

import dataclasses

from protocol.cards import parse_card
from server.core.bots.moves import random_move
from server.core.room.commands import BotAct, Connect, FillBots, Start
from server.core.room.due import BOT_MOVES_PER_TICK, ArchiveDue, BotTurn, bot_moved, bot_seed, due
from server.core.room.machine import step
from server.core.room.state import Clocks
from tests.support.room_driver import Driver


def _bots_table() -> Driver:
    """One human and three bots, the shuffle settled: the bots are passing."""
    d = Driver(clocks=Clocks(bot_think=0.0, between_hands=0.0))
    d.do(Connect("p0", "c0"))
    d.do(FillBots("p0"))
    d.do(Start("p0"))
    d.settle_shuffle()
    return d


def test_a_due_bot_is_asked_with_exactly_its_seats_view_and_a_seed_of_the_position() -> None:
    d = _bots_table()
    turn = due(d.state, d.now, 0)
    assert isinstance(turn, BotTurn)
    assert turn.seat in (1, 2, 3)
    assert d.state.seats[turn.seat].is_bot  # type: ignore[union-attr]
    assert turn.view["seat"] == turn.seat and len(turn.view["hand"]) == 13
    assert turn.seed == bot_seed(d.state, turn.seat)
    assert due(d.state, d.now, 0) == turn  # a retried tick asks for the same move


def test_a_tick_stops_asking_bots_after_its_share_of_moves() -> None:
    d = _bots_table()
    assert isinstance(due(d.state, d.now, BOT_MOVES_PER_TICK - 1), BotTurn)
    assert due(d.state, d.now, BOT_MOVES_PER_TICK) is None


def test_the_archive_comes_after_the_bots_and_nothing_is_due_before_its_time() -> None:
    d = _bots_table()
    done = dataclasses.replace(d.state, unarchived=["r.1", "r.2"], archive_due=d.now)
    assert isinstance(due(done, d.now, 0), BotTurn)
    assert due(done, d.now, BOT_MOVES_PER_TICK) == ArchiveDue(("r.1", "r.2"))
    later = dataclasses.replace(done, archive_due=d.now + 5)
    assert due(later, d.now, BOT_MOVES_PER_TICK) is None
    empty = dataclasses.replace(d.state, unarchived=[], archive_due=d.now)
    assert due(empty, d.now, BOT_MOVES_PER_TICK) is None  # an outbox with nothing in it
    assert due(d.state, d.now - 1, 0) is None  # the bots' think time is not over yet


def test_a_bots_move_the_rules_refuse_becomes_a_random_legal_one() -> None:
    d = _bots_table()
    turn = due(d.state, d.now, 0)
    assert isinstance(turn, BotTurn)
    refused = ("play", parse_card("2C"))  # a card play while the seat must pass
    state, _ = bot_moved(d.state, turn, refused, d.now)
    fallback = BotAct(turn.seat, *random_move(turn.view, turn.seed))
    expected, _ = step(d.state, fallback, d.now)
    assert state.to_bytes() == expected.to_bytes() != d.state.to_bytes()
