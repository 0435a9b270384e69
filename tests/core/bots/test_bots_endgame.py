"""The endgame solver against brute force, and the search that uses it."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from load_tests.sparring import FLAT_RACE
from server.core.bots import search, worlds
from server.core.bots.endgame import Solver, moon_table
from server.core.bots.knowledge import knowledge_of
from server.core.bots.outcome import scored
from server.core.room.game_view import game_view
from server.core.rules import (
    POINT_CARDS,
    Game,
    Hand,
    Moon,
    PassDirection,
    Rules,
    deal_from_deck,
    points_in,
)


def _position(seed: int, left: int) -> Hand:
    """A random hand played at random until ``left`` tricks are left, and 0-3 cards into it."""
    rng = random.Random(seed)
    deck = list(range(52))
    rng.shuffle(deck)
    h = Hand.deal(deal_from_deck(deck), PassDirection.NONE)
    extra = rng.randrange(4)
    while len(h.tricks) < 13 - left or (len(h.trick) < extra and len(h.tricks) == 13 - left):
        legal = h.legal_plays(h.turn)
        h.play(h.turn, rng.choice([c for c in range(52) if legal >> c & 1]))
    return h


def _brute(h: Hand, moons: list[tuple[int, int, int, int]]) -> tuple[tuple[int, ...], list[int]]:
    """Plain max-n through the rules engine, every legal card tried, no table: each seat picks
    the card that leaves it the fewest scored points, then the most for the others, then the
    lowest card. Returns the hand's final scored points and the raw points taken."""
    if h.turn < 0:
        pts = [points_in(t) for t in h.taken]
        for s in range(4):
            if pts[s] == 26:
                return moons[s], pts
        return tuple(pts), pts
    seat = h.turn
    legal = h.legal_plays(seat)
    best: tuple[tuple[int, ...], list[int]] | None = None
    best_key = (0, 0)
    for c in range(52):
        if not legal >> c & 1:
            continue
        child = Hand.from_position(h.hands, h.tricks, h.trick)
        child.play(seat, c)
        final, pts = _brute(child, moons)
        key = (final[seat], -sum(final))
        if best is None or key < best_key:
            best, best_key = (final, pts), key
    assert best is not None
    return best


def test_the_solver_plays_as_brute_force_max_n_does() -> None:
    for rules in (Rules(target=50), Rules(target=50, moon=Moon.SHOOTER_MINUS_26)):
        moons = moon_table([0, 0, 0, 0], rules)
        for seed in range(150):
            h = _position(seed, 1 + seed % 3)
            want_final, want_pts = _brute(h, moons)
            rest = Solver(moons).rest(h.hands, h.trick, h.leader, h.hearts_broken, h.taken)
            pts = [points_in(h.taken[s]) + rest[s] for s in range(4)]
            assert pts == want_pts, seed
            assert tuple(scored(pts, [0, 0, 0, 0], rules)) == want_final, seed


def test_the_solver_with_a_first_card_is_that_card_then_best_play() -> None:
    moons = moon_table([0, 0, 0, 0], Rules(target=50))
    for seed in range(60):
        h = _position(1000 + seed, 2 + seed % 2)
        legal = h.legal_plays(h.turn)
        solver = Solver(moons)  # one table for every first card, as the search uses it
        for c in range(52):
            if not legal >> c & 1:
                continue
            child = Hand.from_position(h.hands, h.tricks, h.trick)
            child.play(h.turn, c)
            _, want = _brute(child, moons)
            rest = solver.rest(h.hands, h.trick, h.leader, h.hearts_broken, h.taken, c)
            assert [points_in(h.taken[s]) + rest[s] for s in range(4)] == want, (seed, c)


def test_a_seat_blocks_a_moon_it_can_block() -> None:
    # North (0) has taken every point but the king, ace and three of hearts, and leads.
    # North: KH AC; East: AH 3H; South: 4C 6C; West: 2C 9C. On the king East must play the
    # ace: under it with the three, North leads the ace of clubs, East's last heart falls on
    # it and North has the moon.
    kh, ah, h3 = 50, 51, 40
    hands = [1 << kh | 1 << 12, 1 << ah | 1 << h3, 1 << 2 | 1 << 4, 1 << 0 | 1 << 7]
    taken = [POINT_CARDS & ~(1 << kh | 1 << ah | 1 << h3), 0, 0, 0]
    moons = moon_table([0, 0, 0, 0], Rules(target=50))
    solver = Solver(moons)
    assert solver.rest(hands, [], 0, True, taken)[0] == 0
    assert solver.rest(hands, [], 0, True, taken, kh) == (0, 3, 0, 0)  # East: AH, then 3H


def test_the_endgame_search_is_deterministic_and_picks_a_legal_card(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The exact endgame is searched only for a wary seat: no deal explains the others' play.
    monkeypatch.setattr(worlds, "surprises", lambda *_: worlds.UNLIKE_POLICY)
    endgames: list[int] = []
    solve = search._search_endgame

    def counted(*args: Any) -> search.SearchResult:
        endgames.append(1)
        return solve(*args)

    monkeypatch.setattr(search, "_search_endgame", counted)
    flat = dataclasses.replace(FLAT_RACE, endgame=3)
    searched = 0
    for seed in range(12):
        rng = random.Random(seed)
        game = Game(Rules(target=50))
        deck = list(range(52))
        rng.shuffle(deck)
        game.start_hand(deal_from_deck(deck))
        assert game.hand is not None
        for s in range(4):
            game.pass_cards(s, sum(1 << c for c in sorted(_cards(game.hand.hands[s]))[:3]))
        while len(game.hand.tricks) < 10 + seed % 3:
            seat = game.hand.turn
            legal = game.legal_plays(seat)
            game.play(seat, rng.choice(_cards(legal)))
        seat = game.hand.turn
        k = knowledge_of(game_view(game, seat))
        legal = game.legal_plays(seat)
        if len(search.equal_classes(k, legal)) < 2:
            continue  # one candidate: no search at all
        a = search.search_play(k, legal, flat, random.Random(3))
        b = search.search_play(k, legal, flat, random.Random(3))
        searched += 1
        assert len(endgames) == 2 * searched  # both answered by the exact endgame
        assert a.options[0].card == b.options[0].card
        assert legal >> a.options[0].card & 1
        assert all(o.worlds <= flat.endgame_worlds for o in a.options)
    assert searched >= 4


def _cards(mask: int) -> list[int]:
    return [c for c in range(52) if mask >> c & 1]


def test_the_paired_comparison_cancels_the_luck_of_the_deal() -> None:
    from load_tests.bots_summary import paired

    rng = random.Random(4)
    field = [rng.uniform(4, 10) for _ in range(200)]
    base = [f * 0.8 + rng.uniform(-3, 3) for f in field]  # the deal's luck, shared ...
    now = [b - 0.4 + rng.uniform(-0.2, 0.2) for b in base]  # ... and a small, steady gain
    diff, se, unpaired, n = paired(now, field, base, field)
    assert n == 200 and diff < 0 and se < unpaired / 5 and abs(diff) > 4 * se
    same = paired(base, field, base, field)
    assert same[0] == 0 and same[1] == 0
