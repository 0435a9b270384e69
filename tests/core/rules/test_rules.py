"""Every rule of docs/rules.md "The standard game" and the house-rule options, one test each."""

from __future__ import annotations

import pytest

from protocol.cards import cards_in, mask_of_names, names_of, parse_card
from server.core.rules import (
    Game,
    Hand,
    HandPhase,
    IllegalMove,
    Moon,
    PassDirection,
    Phase,
    Revokes,
    Rules,
    Tie,
    deal_from_deck,
)
from tests.support.rules_positions import deal, no_pass_hand, play_names

ALL_CLUBS = [r + "C" for r in "23456789TJQKA"]
ALL_HEARTS = [r + "H" for r in "23456789TJQKA"]


def legal_names(hand: Hand) -> list[str]:
    return names_of(hand.legal_plays(hand.turn))


def play_lowest(game: Game) -> None:
    """Finish the current hand with every seat playing its lowest legal card."""
    while game.phase is Phase.PLAYING:
        seat = game.hand.turn
        game.play(seat, cards_in(game.legal_plays(seat))[0])


def moon_deal() -> list[int]:
    # Seat 0 holds every club: it leads 2C and every later trick, and nobody can follow.
    return deal(ALL_CLUBS, ALL_HEARTS)


def game_at_no_pass_hand(rules: Rules) -> Game:
    game = Game(rules)
    game.hand_number = 3  # the next hand is hand 4: no pass
    return game


# -- dealing and passing -------------------------------------------------------------------


def test_a_deal_must_be_four_disjoint_hands_of_thirteen() -> None:
    hands = deal()
    with pytest.raises(ValueError):
        Hand.deal([hands[0], hands[0], hands[2], hands[3]])
    with pytest.raises(ValueError):
        Hand.deal(hands[:3])


def test_pass_cycle_is_left_right_across_none_then_repeats() -> None:
    got = [PassDirection.for_hand(n) for n in range(1, 10)]
    L, R, A, N = PassDirection.LEFT, PassDirection.RIGHT, PassDirection.ACROSS, PassDirection.NONE
    assert got == [L, R, A, N, L, R, A, N, L]


@pytest.mark.parametrize(
    ("direction", "receiver_of_seat_0"),
    [(PassDirection.LEFT, 1), (PassDirection.RIGHT, 3), (PassDirection.ACROSS, 2)],
)
def test_passed_cards_go_to_the_seat_in_the_direction(
    direction: PassDirection, receiver_of_seat_0: int
) -> None:
    hands = deal(["AS", "KS", "QS"])
    hand = Hand.deal(hands, direction)
    picks = [mask_of_names(["AS", "KS", "QS"])] + [
        sum(1 << c for c in cards_in(hands[s])[:3]) for s in (1, 2, 3)
    ]
    for seat in range(4):
        hand.choose_pass(seat, picks[seat])
    assert hand.hands[receiver_of_seat_0] & picks[0] == picks[0]
    assert hand.received(receiver_of_seat_0) == picks[0]
    assert not hand.hands[0] & picks[0]


def test_cards_change_hands_only_when_all_four_have_chosen() -> None:
    hands = deal()
    hand = Hand.deal(hands, PassDirection.LEFT)
    for seat in range(3):
        hand.choose_pass(seat, sum(1 << c for c in cards_in(hands[seat])[:3]))
    assert hand.hands == hands
    assert hand.received(1) == 0
    assert hand.phase is HandPhase.PASSING
    assert hand.legal_plays(0) == 0


def test_a_pass_is_exactly_three_of_your_own_cards_chosen_once() -> None:
    hands = deal(["2C", "3C", "4C", "5C"])
    hand = Hand.deal(hands, PassDirection.LEFT)
    with pytest.raises(IllegalMove) as e:
        hand.choose_pass(0, mask_of_names(["2C", "3C"]))
    assert e.value.code == "bad_pass"
    with pytest.raises(IllegalMove) as e:
        hand.choose_pass(1, mask_of_names(["2C", "3C", "4C"]))
    assert e.value.code == "card_not_in_hand"
    hand.choose_pass(0, mask_of_names(["2C", "3C", "4C"]))
    with pytest.raises(IllegalMove) as e:
        hand.choose_pass(0, mask_of_names(["5C", "6C", "7C"]))
    assert e.value.code == "already_passed"


def test_the_holder_of_two_of_clubs_after_the_pass_leads_it() -> None:
    hands = deal(["2C", "AS", "KS"])
    hand = Hand.deal(hands, PassDirection.LEFT)
    hand.choose_pass(0, mask_of_names(["2C", "AS", "KS"]))
    for seat in (1, 2, 3):
        # Keep the 2 of clubs with seat 1: pass three cards other than it.
        hand.choose_pass(seat, sum(1 << c for c in cards_in(hand.hands[seat] & ~1)[:3]))
    assert hand.turn == 1
    assert legal_names(hand) == ["2C"]
    with pytest.raises(IllegalMove) as e:
        hand.play(1, parse_card("AS"))
    assert e.value.code == "must_lead_two_of_clubs"


# -- following, leading, the first trick ---------------------------------------------------


def test_must_follow_suit_when_able() -> None:
    hand = no_pass_hand(["2C", "AH"], ["3C", "KH", "4D"])
    play_names(hand, "2C")
    assert legal_names(hand) == names_of(hand.hands[1] & mask_of_names(ALL_CLUBS))
    with pytest.raises(IllegalMove) as e:
        hand.play(1, parse_card("4D"))
    assert e.value.code == "must_follow_suit"


def test_highest_card_of_the_suit_led_takes_the_trick() -> None:
    clubs_void = ["AD", "KD", "QD", "AS", "KS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S"]
    hand = no_pass_hand(["2C"], ["3C"], clubs_void, ["4C"])
    play_names(hand, "2C", "3C", "AD", "4C")  # a higher card of another suit never wins
    assert hand.tricks_played == 1
    assert hand.turn == 3 and hand.leader == 3
    assert hand.taken[3] == mask_of_names(["2C", "3C", "AD", "4C"])


def test_no_points_on_the_first_trick_when_holding_anything_else() -> None:
    void_with_points = ["QS", "AH", "KH", *(r + "D" for r in "23456789TJ")]
    hand = no_pass_hand(["2C"], void_with_points)
    play_names(hand, "2C")
    assert parse_card("QS") not in cards_in(hand.legal_plays(1))
    assert parse_card("AH") not in cards_in(hand.legal_plays(1))
    with pytest.raises(IllegalMove) as e:
        hand.play(1, parse_card("QS"))
    assert e.value.code == "no_points_on_first_trick"
    with pytest.raises(IllegalMove) as e:
        hand.play(1, parse_card("AH"))
    assert e.value.code == "no_points_on_first_trick"


def test_first_trick_hand_of_only_hearts_and_queen_may_play_any_of_them() -> None:
    only_points = ["QS", *ALL_HEARTS[:12]]
    hand = no_pass_hand(["2C"], only_points)
    play_names(hand, "2C")
    assert sorted(legal_names(hand)) == sorted(only_points)
    play_names(hand, "QS")  # allowed: nothing else to play


def test_forced_heart_on_the_first_trick_breaks_hearts() -> None:
    hand = no_pass_hand(["2C"], ["QS", *ALL_HEARTS[:12]], ["AC", "AH", "2D"], ["3C"])
    play_names(hand, "2C", "KH", "AC", "3C")
    assert hand.hearts_broken
    assert hand.turn == 2
    assert "AH" in legal_names(hand)  # seat 2 may lead a heart at once


def _after_first_trick(leader_cards: list[str]) -> Hand:
    """Seat 1 takes trick 1 with AC and must then lead from ``leader_cards`` (hearts unbroken)."""
    seat1 = ["AC", *leader_cards]
    others = [c for c in ["3C", "4C", "5C", "6C", "7C", "8C"] if c not in seat1]
    hand = no_pass_hand(["2C", others[0]], seat1, [others[1]], [others[2]])
    play_names(hand, "2C", "AC", others[1], others[2])
    assert hand.turn == 1 and not hand.hearts_broken
    return hand


def test_hearts_cannot_be_led_before_they_are_broken() -> None:
    hand = _after_first_trick(["AH", "2D", *ALL_HEARTS[:10]])
    assert "AH" not in legal_names(hand)
    with pytest.raises(IllegalMove) as e:
        hand.play(1, parse_card("AH"))
    assert e.value.code == "hearts_not_broken"
    assert legal_names(hand) == ["2D"]


def test_a_hand_of_only_hearts_may_lead_a_heart_unbroken() -> None:
    hand = _after_first_trick(ALL_HEARTS[:12])
    assert sorted(legal_names(hand)) == sorted(ALL_HEARTS[:12])


def test_hearts_plus_queen_unbroken_must_lead_the_queen() -> None:
    hand = _after_first_trick(["QS", *ALL_HEARTS[:11]])
    assert legal_names(hand) == ["QS"]


def test_queen_of_spades_does_not_break_hearts() -> None:
    hand = _after_first_trick(["QS", "2D", *ALL_HEARTS[:10]])
    play_names(hand, "QS")
    assert not hand.hearts_broken


def test_queen_of_spades_may_be_led_after_the_first_trick() -> None:
    hand = _after_first_trick(["QS", "2D", *ALL_HEARTS[:10]])
    assert "QS" in legal_names(hand)


def test_out_of_turn_and_card_not_held_are_refused() -> None:
    hand = no_pass_hand(["2C"], ["3C"])
    with pytest.raises(IllegalMove) as e:
        hand.play(1, parse_card("3C"))
    assert e.value.code == "not_your_turn"
    with pytest.raises(IllegalMove) as e:
        hand.play(0, parse_card("3C"))
    assert e.value.code == "card_not_in_hand"


def test_a_refused_move_changes_nothing() -> None:
    hand = no_pass_hand(["2C"], ["3C", "AH"])
    before = hand.to_value()
    for seat, card in [(1, "3C"), (0, "AH"), (0, "3C")]:
        with pytest.raises(IllegalMove):
            hand.play(seat, parse_card(card))
    assert hand.to_value() == before
    assert hand.turn == 0


def test_thirteen_tricks_then_the_hand_is_over_with_26_points() -> None:
    game = game_at_no_pass_hand(Rules())
    game.start_hand([sum(1 << c for c in range(s, 52, 4)) for s in range(4)])  # cards dealt round
    play_lowest(game)
    assert game.hand.shooter() is None
    assert game.hand.tricks_played == 13
    assert game.hand.is_over
    assert sum(game.history[0]) == 26
    assert all(h == 0 for h in game.hand.hands)


# -- scoring and the moon ------------------------------------------------------------------


def test_points_hearts_one_each_queen_thirteen() -> None:
    from server.core.rules import points_in

    assert points_in(mask_of_names(["2H", "AH", "QS", "KS", "2C"])) == 15


@pytest.mark.parametrize(
    ("moon", "expected"),
    [(Moon.OTHERS_26, [0, 26, 26, 26]), (Moon.SHOOTER_MINUS_26, [-26, 0, 0, 0])],
)
def test_shooting_the_moon(moon: Moon, expected: list[int]) -> None:
    game = game_at_no_pass_hand(Rules(moon=moon))
    game.start_hand(moon_deal())
    play_lowest(game)
    assert game.hand.shooter() == 0
    assert game.history == [expected]
    assert game.scores == expected


def test_shooter_chooses_is_a_decision_for_the_shooter_only() -> None:
    game = game_at_no_pass_hand(Rules(moon=Moon.SHOOTER_CHOOSES))
    game.start_hand(moon_deal())
    play_lowest(game)
    assert game.phase is Phase.MOON_CHOICE and game.moon_chooser == 0
    assert game.scores == [0, 0, 0, 0]
    with pytest.raises(IllegalMove) as e:
        game.choose_moon(1, Moon.OTHERS_26)
    assert e.value.code == "not_your_turn"
    with pytest.raises(IllegalMove) as e:
        game.choose_moon(0, "shooter_chooses")
    assert e.value.code == "bad_moon_choice"
    game.choose_moon(0, "shooter_minus_26")
    assert game.scores == [-26, 0, 0, 0]
    assert game.phase is Phase.DEAL


# -- the end of the game -------------------------------------------------------------------


def test_game_ends_when_a_score_reaches_the_target_after_a_whole_hand() -> None:
    game = game_at_no_pass_hand(Rules(target=50, moon=Moon.OTHERS_26))
    game.scores = [0, 24, 10, 10]
    game.start_hand(moon_deal())
    while game.phase is Phase.PLAYING:
        # Mid-hand nothing is checked, however many points have been taken.
        assert not game.over
        seat = game.hand.turn
        game.play(seat, cards_in(game.legal_plays(seat))[0])
    assert game.scores == [0, 50, 36, 36]  # 50 reaches the target exactly
    assert game.phase is Phase.OVER
    assert game.winners == [0]


def test_game_goes_on_below_the_target() -> None:
    game = game_at_no_pass_hand(Rules(target=100))
    game.scores = [0, 24, 10, 10]
    game.start_hand(moon_deal())
    play_lowest(game)
    assert game.phase is Phase.DEAL and not game.over
    assert game.next_direction is PassDirection.LEFT  # hand 5 passes left again


def test_tied_lowest_scores_share_the_win() -> None:
    game = game_at_no_pass_hand(Rules(target=50, tie=Tie.SHARE))
    game.scores = [26, 0, 30, 30]
    game.start_hand(moon_deal())
    play_lowest(game)  # seat 0 shoots: 26, 26, 56, 56
    assert game.over and game.winners == [0, 1]


def test_play_off_plays_more_hands_until_one_lowest_score() -> None:
    game = game_at_no_pass_hand(Rules(target=50, tie=Tie.PLAY_OFF))
    game.scores = [26, 0, 30, 30]
    game.start_hand(moon_deal())
    play_lowest(game)
    assert not game.over and game.playoff and game.phase is Phase.DEAL
    game.hand_number = 3
    game.start_hand(moon_deal())  # seat 0 shoots again: 26, 52, 82, 82
    play_lowest(game)
    assert game.over and game.winners == [0]


# -- revokes allowed -----------------------------------------------------------------------


def _revoke_hand() -> Hand:
    hand = no_pass_hand(["2C"], ["3C", "4D"], revokes_allowed=True)
    play_names(hand, "2C")
    return hand


def test_revokes_allowed_lets_any_card_be_played_when_following() -> None:
    hand = _revoke_hand()
    assert hand.legal_plays(1) == hand.hands[1]
    hand.play(1, parse_card("4D"))  # a revoke: seat 1 held a club
    assert hand.revoked == 0b0010


def test_revokes_allowed_keeps_the_leading_rules() -> None:
    hand = no_pass_hand(["2C", "3C"], revokes_allowed=True)
    assert legal_names(hand) == ["2C"]


def test_revoke_call_on_a_revoker_gives_them_26_and_ends_the_hand() -> None:
    game = game_at_no_pass_hand(Rules(revokes=Revokes.ALLOWED))
    game.start_hand(deal(["2C"], ["3C", "4D"]))
    game.play(0, parse_card("2C"))
    game.play(1, parse_card("4D"))
    assert game.call_revoke(2, 1) is True
    assert game.history == [[0, 26, 0, 0]]
    assert game.phase is Phase.DEAL


def test_a_false_revoke_call_gives_the_accuser_26() -> None:
    game = game_at_no_pass_hand(Rules(revokes=Revokes.ALLOWED))
    game.start_hand(deal(["2C"], ["3C", "4D"]))
    game.play(0, parse_card("2C"))
    game.play(1, parse_card("3C"))
    assert game.call_revoke(2, 1) is False
    assert game.history == [[0, 0, 26, 0]]


def test_revoke_calls_are_refused_when_revokes_are_blocked() -> None:
    game = game_at_no_pass_hand(Rules())
    game.start_hand(deal())
    with pytest.raises(IllegalMove) as e:
        game.call_revoke(1, 0)
    assert e.value.code == "revokes_blocked"
    with pytest.raises(IllegalMove):
        game.call_revoke(0, 0)


# -- options and values --------------------------------------------------------------------


def test_only_the_standard_game_can_be_rated() -> None:
    assert Rules(target=100).standard
    assert not Rules(moon=Moon.SHOOTER_MINUS_26).standard
    assert not Rules(revokes="allowed").standard
    with pytest.raises(ValueError):
        Rules(target=75)


def test_a_game_serializes_to_plain_values_and_restores_equal() -> None:
    game = Game(Rules(target=100, moon=Moon.SHOOTER_CHOOSES))
    game.start_hand(deal_from_deck(list(range(52))))
    for seat in range(4):
        game.pass_cards(seat, sum(1 << c for c in cards_in(game.hand.hands[seat])[-3:]))
    for _ in range(7):
        seat = game.hand.turn
        game.play(seat, cards_in(game.legal_plays(seat))[0])
    restored = Game.from_value(game.to_value())
    assert restored == game
    assert restored.legal_plays(restored.hand.turn) == game.legal_plays(game.hand.turn)


def test_a_game_ended_for_absent_seats_goes_to_the_lowest_present_score() -> None:
    game = game_at_no_pass_hand(Rules())
    game.scores = [10, 3, 7, 3]
    game.start_hand(deal())
    assert game.end_without([1]) == [3]  # seat 1 is lowest but stopped answering
    assert game.phase is Phase.OVER and game.winners == [3]
    with pytest.raises(IllegalMove):
        game.end_without([0])
