"""Moons against strong: reading a run deal by deal, and passes that would hand one over."""

from __future__ import annotations

import random

from server.bots import BOT_LEVELS, decide
from server.bots.knowledge import knowledge_of
from server.bots.search import _trial_pass
from server.bots.worlds import other_plays, plays_like_a_shooter
from server.room.game_view import game_view
from server.rules import Game, Rules

from .test_bots_crafted import DUCK_HANDS, DUCK_PLAYS, MOON_HANDS, MOON_PLAYS, game_at, view_at


def _true_world(hands: list[str], plays: str, seat: int) -> tuple[list[int], list[int]]:
    game = game_at(hands, plays)
    k = knowledge_of(game_view(game, seat))
    return list(game.hand.hands), k  # type: ignore[union-attr, return-value]


def test_a_seat_that_leads_its_winners_plays_like_a_shooter() -> None:
    world, k = _true_world(MOON_HANDS, MOON_PLAYS, 0)
    west = [p for p in other_plays(k) if p.seat == 3]  # type: ignore[arg-type]
    assert plays_like_a_shooter(world, west)


def test_a_seat_that_dumps_the_queen_on_another_trick_does_not() -> None:
    world, k = _true_world(DUCK_HANDS, DUCK_PLAYS, 0)
    south = [p for p in other_plays(k) if p.seat == 3]  # type: ignore[arg-type]
    assert len(south) == 2 and not plays_like_a_shooter(world, south)


def test_strong_takes_the_heart_from_a_run_it_reads_from_the_play() -> None:
    view = view_at(MOON_HANDS, MOON_PLAYS)
    assert BOT_LEVELS["strong"].moon_wary
    for seed in range(3):
        assert decide(view, "strong", rng_seed=seed).cards != ("3H",)


def test_the_wary_price_of_a_pass_differs_only_by_the_receivers_moon() -> None:
    rng = random.Random(5)
    moons = 0
    for _ in range(300):
        deck = list(range(52))
        rng.shuffle(deck)
        deal = [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]
        game = Game(Rules(target=100))
        game.start_hand(deal)
        k = knowledge_of(game_view(game, 0))
        passes = [0] + [sum(1 << c for c in deck[13 * s : 13 * s + 3]) for s in (1, 2, 3)]
        cards = sum(1 << c for c in rng.sample(deck[:13], 3))
        wary = _trial_pass(k, (deal, passes), cards, True)
        unwary = _trial_pass(k, (deal, passes), cards, False)
        if wary != unwary:
            moons += 1
            assert wary[0] == 26 and unwary[0] < 26
    assert 0 < moons < 30
