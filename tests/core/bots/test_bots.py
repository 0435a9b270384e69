"""Bots: legal play in every phase and option, no way to hidden cards, hints that say why."""

from __future__ import annotations

import inspect
import itertools
import json
import random

import pytest

import server.core.bots
from protocol.cards import card_name, mask_of_names, names_of, parse_card
from server.core.bots import BOT_LEVELS, Decision, decide, hint, priced_pass
from server.core.bots.knowledge import knowledge_of
from server.core.bots.outcome import choose_moon, utility
from server.core.bots.search import equal_classes
from server.core.room.game_view import game_view
from server.core.rules import Game, Hand, Moon, Phase, Revokes, Rules, Tie, deal_from_deck
from tests.core.bots.test_bots_crafted import (
    DUCK_HANDS,
    DUCK_PLAYS,
    MOON_HANDS,
    MOON_PLAYS,
    QUEEN_HANDS,
    QUEEN_PLAYS,
    game_at,
    view_at,
)

ALL_RULES = [
    Rules(target, moon, revokes, tie)
    for target, moon, revokes, tie in itertools.product((50, 100), Moon, Revokes, Tie)
]


def strict_legal(game: Game, seat: int) -> int:
    """What the standard rules allow ``seat`` now, whatever the table allows (revokes)."""
    hand = game.hand
    assert hand is not None
    return Hand.from_position(hand.hands, hand.tricks, hand.trick).legal_plays(seat)


def waiting_seat(game: Game) -> int:
    hand = game.hand
    assert hand is not None
    if game.phase is Phase.PASSING:
        return next(s for s in range(4) if not hand.passes[s])
    if game.phase is Phase.MOON_CHOICE:
        return game.moon_chooser
    return hand.turn


def apply(game: Game, seat: int, d: Decision) -> None:
    if d.kind == "pass":
        game.pass_cards(seat, mask_of_names(d.cards))
    elif d.kind == "play":
        game.play(seat, parse_card(d.cards[0]))
    elif d.kind == "moon":
        game.choose_moon(seat, d.moon)  # type: ignore[arg-type]
    else:
        raise AssertionError(f"seat {seat} was asked to move and answered {d}")


def play_hand_checked(game: Game, levels: list[str], deal: list[int], seed: int) -> None:
    """Play one hand with bots, checking every decision against the rules engine."""
    game.start_hand(deal)
    step = 0
    while game.phase in (Phase.PASSING, Phase.PLAYING, Phase.MOON_CHOICE):
        seat = waiting_seat(game)
        view = game_view(game, seat)
        d = decide(view, levels[seat], rng_seed=seed * 1000 + step)
        step += 1
        if game.phase is Phase.PASSING:
            assert d.kind == "pass" and len(set(d.cards)) == 3
            assert mask_of_names(d.cards) & ~game.hand.hands[seat] == 0  # type: ignore[union-attr]
        elif game.phase is Phase.PLAYING:
            assert d.kind == "play"
            assert strict_legal(game, seat) >> parse_card(d.cards[0]) & 1, (d, view["legal"])
        else:
            assert d.kind == "moon" and d.moon in ("others_26", "shooter_minus_26")
        # Every other seat has nothing to send meanwhile.
        for other in range(4):
            if other != seat and not (game.phase is Phase.PASSING and not game.hand.passes[other]):  # type: ignore[union-attr]
                assert decide(game_view(game, other), "basic").kind == "wait"
        apply(game, seat, d)
    assert game.hand.revoked == 0  # type: ignore[union-attr]


def random_deal(rng: random.Random) -> list[int]:
    deck = list(range(52))
    rng.shuffle(deck)
    return deal_from_deck(deck)


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: "-".join(map(str, r.to_value())))
def test_bots_play_only_legal_cards_under_every_option(rules: Rules) -> None:
    index = ALL_RULES.index(rules)
    rng = random.Random(index)
    game = Game(rules)
    game.hand_number = index % 4  # start at each pass direction in turn
    levels = ["normal", "basic", "normal", "basic"] if index % 3 else ["strong", "basic"] * 2
    for _ in range(2):
        if game.phase is Phase.OVER:
            break
        play_hand_checked(game, levels, random_deal(rng), index)


def test_bots_keep_to_the_standard_rules_where_revokes_are_allowed() -> None:
    # The view lists every card as playable when following; the bot still follows suit.
    rules = Rules(revokes="allowed")
    game = Game(rules)
    rng = random.Random(5)
    game.start_hand(random_deal(rng))
    for seat in range(4):
        game.pass_cards(seat, mask_of_names(names_of(game.hand.hands[seat])[:3]))  # type: ignore[union-attr]
    checked = 0
    while game.phase is Phase.PLAYING:
        seat = game.hand.turn  # type: ignore[union-attr]
        view = game_view(game, seat)
        d = decide(view, "strong" if seat == 0 else "basic", rng_seed=checked)
        card = parse_card(d.cards[0])
        strict = strict_legal(game, seat)
        if mask_of_names(view["legal"]) != strict:
            checked += 1  # a position where a revoke was on offer
        assert strict >> card & 1
        game.play(seat, card)
    assert checked > 5 and game.hand.revoked == 0  # type: ignore[union-attr]


def test_bots_cope_with_a_player_who_revokes() -> None:
    # Seat 1 revokes whenever it can; the facts it faked do not stop the others from playing.
    game = Game(Rules(revokes="allowed"))
    rng = random.Random(8)
    game.hand_number = 3
    game.start_hand(random_deal(rng))
    revokes = 0
    while game.phase is Phase.PLAYING:
        seat = game.hand.turn  # type: ignore[union-attr]
        if seat == 1:
            legal = game.legal_plays(seat)
            off = legal & ~strict_legal(game, seat)
            card = names_of(off or legal)[-1]
            revokes += bool(off)
            game.play(seat, parse_card(card))
            continue
        d = decide(game_view(game, seat), "strong" if seat == 0 else "normal", rng_seed=seat)
        assert strict_legal(game, seat) >> parse_card(d.cards[0]) & 1
        game.play(seat, parse_card(d.cards[0]))
    assert revokes > 0


def test_a_bot_that_shot_the_moon_chooses_how_it_scores_by_the_game() -> None:
    # Seat 0 holds every club, so it takes every trick and every point: a moon.
    hands = [" ".join(r + suit for r in "23456789TJQKA") for suit in "CHDS"]
    for scores, expected, why in (
        # Others reach 50+ and seat 0 stays lowest: a win.
        ([40, 20, 30, 35], "others_26", "ends the game with you on the lowest score"),
        # Others 26 would end it with seat 1 lowest.
        ([30, 0, 40, 40], "shooter_minus_26", "does not end the game while someone else has"),
    ):
        game = game_at(hands, "", Rules(target=50, moon="shooter_chooses"))
        game.scores = scores.copy()
        while game.phase is Phase.PLAYING:
            seat = game.hand.turn  # type: ignore[union-attr]
            game.play(seat, parse_card(decide(game_view(game, seat), "basic").cards[0]))
        assert game.phase is Phase.MOON_CHOICE and game.moon_chooser == 0
        d = decide(game_view(game, 0), "strong")
        assert d.kind == "moon" and d.moon == expected
        h = hint(game_view(game, 0))
        assert h.moon == expected and h.reason.startswith(why)
        assert all(decide(game_view(game, s)).kind == "wait" for s in (1, 2, 3))


def test_near_the_target_the_game_result_outweighs_the_hand() -> None:
    # A: North takes 5 and wins the game; B: North takes 0 but East, lower, wins it.
    win_with_five, lose_with_none = [5, 13, 4, 4], [0, 0, 13, 13]
    rules = Rules(target=50)
    far, near = [0, 0, 0, 0], [40, 38, 45, 45]
    assert utility(0, far, rules, win_with_five) < utility(0, far, rules, lose_with_none)
    assert utility(0, near, rules, win_with_five) > utility(0, near, rules, lose_with_none)


def test_touching_cards_are_one_candidate_unless_something_lies_between() -> None:
    # North holds 9D TD and KD AD; the queen of diamonds (unseen) splits them, the jack on the
    # table splits 9D TD from the cards above it.
    k = knowledge_of(view_at(DUCK_HANDS, DUCK_PLAYS))
    legal = mask_of_names(["9D", "TD", "KD", "AD"])
    assert sorted(names_of(c) for c in equal_classes(k, legal)) == [["9D", "TD"], ["KD", "AD"]]
    # The queen of spades never merges with her neighbours: she is worth 13.
    k.hand |= mask_of_names(["JS", "QS", "KS"])
    k.unseen &= ~mask_of_names(["JS", "QS", "KS"])
    spades = mask_of_names(["JS", "QS", "KS"])
    assert len(equal_classes(k, spades)) == 3


def test_moon_choice_pushes_the_end_nearer_only_when_leading() -> None:
    rules = Rules(target=100, moon="shooter_chooses")
    assert choose_moon(0, [10, 30, 30, 30], rules) == "others_26"  # leading: end it sooner
    assert choose_moon(0, [40, 10, 20, 20], rules) == "shooter_minus_26"  # behind: play on


# -- the bots see only the view --------------------------------------------------------------


def test_decide_takes_a_view_and_nothing_that_could_hold_the_game() -> None:
    # ``stop`` is a clock: a function of nothing that answers yes or no; no cards come in by it.
    assert list(inspect.signature(decide).parameters) == ["view", "level", "rng_seed", "stop"]
    assert str(inspect.signature(decide).parameters["stop"].annotation) == (
        "Callable[[], bool] | None"
    )
    assert list(inspect.signature(hint).parameters) == ["view", "level", "rng_seed"]
    # No bot module holds the Game class, so none can build or read one from a view.
    for name in dir(server.core.bots):
        module = getattr(server.core.bots, name)
        if inspect.ismodule(module):
            assert Game not in vars(module).values(), module.__name__


def test_the_view_a_bot_gets_names_no_card_hidden_from_its_seat() -> None:
    game = game_at(DUCK_HANDS, DUCK_PLAYS)
    seat = game.hand.turn  # type: ignore[union-attr]
    view = game_view(game, seat)
    text = json.dumps(view)
    hidden = [
        card_name(c)
        for s in range(4)
        if s != seat
        for c in range(52)
        if game.hand.hands[s] >> c & 1  # type: ignore[union-attr]
    ]
    assert hidden and not any(f'"{name}"' in text for name in hidden)
    assert decide(view, "strong", rng_seed=1).kind == "play"


def test_hidden_cards_that_differ_but_leave_the_view_alone_do_not_change_the_decision() -> None:
    # East and South trade cards neither has played nor shown: North's view is the same.
    swapped = list(DUCK_HANDS)
    swapped[1] = swapped[1].replace("8H", "9S")
    swapped[2] = swapped[2].replace("9S", "8H")
    a, b = game_at(DUCK_HANDS, DUCK_PLAYS), game_at(swapped, DUCK_PLAYS)
    assert a.hand.hands != b.hand.hands  # type: ignore[union-attr]
    va, vb = game_view(a, 0), game_view(b, 0)
    assert va == vb
    for level in BOT_LEVELS:
        assert decide(va, level, rng_seed=3) == decide(vb, level, rng_seed=3)


def test_decisions_are_deterministic_for_a_seed() -> None:
    view = view_at(DUCK_HANDS, "2C KC 3C 4C")
    for level in BOT_LEVELS:
        assert decide(view, level, rng_seed=9) == decide(view, level, rng_seed=9)
    assert decide(view) == decide(view)  # unseeded: seeded from the view itself


def test_before_the_first_deal_there_is_nothing_to_send() -> None:
    view = game_view(Game(Rules()), 2)
    assert decide(view).kind == "wait" and hint(view).kind == "wait"


def test_a_spectator_view_is_refused() -> None:
    game = game_at(DUCK_HANDS, DUCK_PLAYS)
    with pytest.raises(ValueError):
        decide(game_view(game, None))


# -- levels ------------------------------------------------------------------------------------


def test_each_level_is_a_named_bot_identity() -> None:
    assert [(lv.level, lv.id, lv.name) for lv in BOT_LEVELS.values()] == [
        ("basic", "bot:basic", "Basic Bot"),
        ("normal", "bot:normal", "Normal Bot"),
        ("strong", "bot:strong", "Strong Bot"),
    ]
    assert decide(view_at(DUCK_HANDS, DUCK_PLAYS), "normal").bot == "bot:normal"
    with pytest.raises(ValueError):
        decide(view_at(DUCK_HANDS, DUCK_PLAYS), "grandmaster")


# -- hints -------------------------------------------------------------------------------------


def test_a_hint_suggests_the_card_the_bot_plays_and_it_is_legal() -> None:
    rng = random.Random(12)
    game = Game(Rules())
    game.start_hand(random_deal(rng))
    compared = 0
    while game.phase in (Phase.PASSING, Phase.PLAYING):
        seat = waiting_seat(game)
        view = game_view(game, seat)
        level = ("strong", "basic")[seat % 2]
        h = hint(view, level, rng_seed=seat)
        d = decide(view, level, rng_seed=seat)
        assert h.cards == d.cards and h.kind == d.kind
        if d.kind == "play":
            assert strict_legal(game, seat) >> parse_card(d.cards[0]) & 1
        assert h.reason and h.text.endswith(".")
        json.dumps(h.to_dict())  # JSON-able as it is
        compared += 1
        apply(game, seat, d)
    assert compared >= 52


def test_hint_ducks_under_the_card_on_the_table() -> None:
    view = view_at(DUCK_HANDS, DUCK_PLAYS)
    h = hint(view, "strong", rng_seed=1)
    assert h.cards == ("TD",)
    assert h.reason == "ducks under the jack of diamonds on the table"
    # The alternatives are priced by the search and cost more than the duck.
    assert h.expected_points is not None and h.alternatives
    assert all(a["expected_points"] > h.expected_points for a in h.alternatives)


def test_hint_dumps_the_queen_when_out_of_the_suit_led() -> None:
    h = hint(view_at(QUEEN_HANDS, QUEEN_PLAYS), "strong", rng_seed=1)
    assert h.cards == ("QS",)
    assert h.reason.startswith("dumps the queen of spades on a trick the player on your right is")
    assert "out of diamonds" in h.reason


def test_hint_takes_a_heart_to_stop_a_moon() -> None:
    for level in BOT_LEVELS:
        h = hint(view_at(MOON_HANDS, MOON_PLAYS), level, rng_seed=1)
        assert h.cards != ("3H",), level  # ducking lets West take all 26
        assert h.reason == "takes a heart so the player on your right cannot shoot the moon", level


def test_hint_for_a_pass_names_the_queen_without_guards() -> None:
    game = Game(Rules())
    hands = [
        "QS 2S KD AD 9C TC JC QC 3D 4D 5D 2H 3H",
        "2C 3C 4C 5C 6C 7C 8C 2D 6D 7D 8D 9D TD",
        "AC KC JD QD 3S 4S 5S 6S 7S 8S 9S TS JS",
        "KS AS 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
    ]
    game.start_hand([mask_of_names(h.split()) for h in hands])
    h = hint(game_view(game, 0), "strong", rng_seed=2)
    assert h.kind == "pass" and "QS" in h.cards
    assert "queen of spades" in h.reason and h.text.startswith("Pass ")
    # The pass was priced: the other passes are priced too, keeping the queen costs more, and
    # none is cheaper than the pass made by the margin a priced pass needs to replace basic's.
    assert h.expected_points is not None and len(h.alternatives) >= 5
    keeping = [a["expected_points"] for a in h.alternatives if "QS" not in a["cards"]]
    assert keeping and min(keeping) > h.expected_points
    cheapest = min(a["expected_points"] for a in h.alternatives)
    assert cheapest > h.expected_points - priced_pass.MARGIN - 0.01


# -- the benchmark runs ------------------------------------------------------------------------


def test_the_benchmark_plays_duplicate_deals_with_the_tested_bot_in_each_seat() -> None:
    from load_tests.bench_bots import run_segment

    results = [run_segment(("basic", "random", r, 0, 2, 3, 50)) for r in range(4)]
    # The same two deals in every rotation: the four seats' points add up to the same hands.
    assert all(len(r.tested_points) == 2 for r in results)
    for r in results:
        for tested, field in zip(r.tested_points, r.field_points, strict=True):
            assert tested + 3 * field in (26, 78)  # 26, or 78 when someone shot the moon
    # The tested bot's decisions are timed; the basic bot never searches.
    assert all(r.decision_s for r in results) and not any(r.searched_s for r in results)
    for r in results:
        no_moon = sum(t + 3 * f == 26 for t, f in zip(r.tested_points, r.field_points, strict=True))
        assert r.queens_tested + r.queens_field == no_moon  # one seat took the queen
        assert r.queens_tested <= sum(t >= 13 for t in r.tested_points)
        assert r.heavy_tested == sum(16 <= t < 26 for t in r.tested_points)
        assert r.open_hands and r.open_hands[0] == (r.tested_points[0], r.field_points[0])
