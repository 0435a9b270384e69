"""A game of four random-legal bots, printed hand by hand: the engine end to end, no server."""

from __future__ import annotations

import argparse
import secrets

from protocol.cards import card_name, cards_in
from server.core.rules import Game, Phase, Rules, deal_from_deck

SEAT_NAMES = ("North", "East", "South", "West")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", type=int, default=50, choices=(50, 100))
    args = parser.parse_args()
    rng = secrets.SystemRandom()
    game = Game(Rules(target=args.target))
    while game.phase is not Phase.OVER:
        deck = list(range(52))
        rng.shuffle(deck)
        hand = game.start_hand(deal_from_deck(deck))
        print(f"Hand {game.hand_number}: pass {hand.direction.name.lower()}")
        if game.phase is Phase.PASSING:
            for seat in range(4):
                picked = rng.sample(cards_in(hand.hands[seat]), 3)
                game.pass_cards(seat, sum(1 << c for c in picked))
                print(f"  {SEAT_NAMES[seat]:5} passes {' '.join(card_name(c) for c in picked)}")
        while game.phase is Phase.PLAYING:
            leader = hand.turn
            cards = []
            for _ in range(4):
                seat = hand.turn
                card = rng.choice(cards_in(game.legal_plays(seat)))
                cards.append(card_name(card))
                winner = game.play(seat, card)
            print(f"  {SEAT_NAMES[leader]:5} leads: {' '.join(cards)} -> {SEAT_NAMES[winner]}")
        points = game.history[-1]
        print("  points:", ", ".join(f"{SEAT_NAMES[s]} {points[s]}" for s in range(4)))
        print("  scores:", ", ".join(f"{SEAT_NAMES[s]} {game.scores[s]}" for s in range(4)))
    print("Winner(s):", ", ".join(SEAT_NAMES[s] for s in game.winners))


if __name__ == "__main__":
    main()
