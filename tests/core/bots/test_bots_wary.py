"""Against players the policy does not explain, a moon line needs more of the deals."""

from __future__ import annotations

import random

import pytest

from load_tests.sparring import FLAT_RACE
from protocol.cards import mask_of_names, parse_card
from server.core.bots import decide, search, worlds
from server.core.bots.knowledge import Knowledge, knowledge_of
from server.core.room.game_view import game_view
from server.core.rules import Game, Rules


def _moon_positions() -> list[tuple[Knowledge, int]]:
    """Seat 0 holds the top of every suit; the others pass and play like the basic bot until
    seat 0 has a choice to make after the first trick."""
    out = []
    for seed in range(8):
        rng = random.Random(seed)
        mine = [12, 11, 10, 25, 24, 23, 38, 37, 36, 51, 50, 49, 48]  # A K Q of each, and JH
        rest = [c for c in range(52) if c not in mine]
        rng.shuffle(rest)
        game = Game(Rules(target=50))
        game.start_hand(
            [sum(1 << c for c in mine), *(sum(1 << c for c in rest[i::3]) for i in range(3))]
        )
        for s in range(4):
            game.pass_cards(s, mask_of_names(decide(game_view(game, s), "basic", 1).cards))
        assert game.hand is not None
        while not game.hand.tricks or game.hand.turn != 0:
            s = game.hand.turn
            game.play(s, parse_card(decide(game_view(game, s), "basic", 1).cards[0]))
        legal = game.legal_plays(0)
        if legal & (legal - 1):
            out.append((knowledge_of(game_view(game, 0)), legal))
    return out


def test_plausible_worlds_say_whether_the_policy_explains_the_play(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    k, _ = _moon_positions()[0]
    fit: list[bool] = []
    worlds.plausible_worlds(k, random.Random(1), 4, pool=3, fit=fit)
    assert fit == [True]  # basic bots played: the true deal, and others near it, fit
    monkeypatch.setattr(worlds, "surprises", lambda *_: worlds.UNLIKE_POLICY)
    worlds.plausible_worlds(k, random.Random(1), 4, pool=3, fit=fit)
    assert fit == [True, False]


def test_a_moon_line_against_players_unlike_the_policy_needs_the_wary_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    flat = FLAT_RACE
    positions = _moon_positions()
    shooting = [
        p for p in positions if search.search_play(p[0], p[1], flat, random.Random(2)).shooting
    ]
    assert shooting  # with every top card, the bot goes for the moon
    monkeypatch.setattr(search, "WARY_SHOOT_RATE", 1.01)
    monkeypatch.setattr(search, "WARY_COMMITTED_RATE", 1.01)
    for k, legal in shooting:  # the policy explains these players: the usual share
        assert search.search_play(k, legal, flat, random.Random(2)).shooting
    monkeypatch.setattr(worlds, "surprises", lambda *_: worlds.UNLIKE_POLICY)
    for k, legal in shooting:  # it does not: no moon line makes the moon in every deal
        assert not search.search_play(k, legal, flat, random.Random(2)).shooting


def test_the_exact_endgame_is_for_players_the_policy_does_not_explain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(5)
    game = Game(Rules(target=50))
    deck = list(range(52))
    rng.shuffle(deck)
    game.start_hand([sum(1 << c for c in deck[i::4]) for i in range(4)])
    for s in range(4):
        game.pass_cards(s, mask_of_names(decide(game_view(game, s), "basic", 1).cards))
    assert game.hand is not None
    positions = []
    while game.hand.turn >= 0:
        s = game.hand.turn
        legal = game.legal_plays(s)
        if len(game.hand.tricks) >= 10 and legal & (legal - 1):
            positions.append((knowledge_of(game_view(game, s)), legal))
        game.play(s, parse_card(decide(game_view(game, s), "basic", 1).cards[0]))
    assert positions
    used: list[int] = []
    monkeypatch.setattr(search, "_search_endgame", lambda *a: used.append(1) or search_none())
    flat = FLAT_RACE
    for k, legal in positions:  # the basic bots played: the policy explains them
        search.search_play(k, legal, flat, random.Random(1))
    assert not used
    monkeypatch.setattr(worlds, "surprises", lambda *_: worlds.UNLIKE_POLICY)
    for k, legal in positions:
        search.search_play(k, legal, flat, random.Random(1))
    assert used  # (a choice among equal cards takes no search at all)


def search_none() -> search.SearchResult:
    return search.SearchResult([search.Option(1, 0, 0.0, 0.0, 0.0, False, 0)], -1, False)
