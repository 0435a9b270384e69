"""What one seat (or a spectator) may know of a game: the card part of every view.

This is the only function that turns a ``Game`` into something that leaves the server; the room
adds seats, clocks and the shuffle to it. A seat sees its own cards, its own pass, and public
facts (every card played, scores, whose turn). A spectator (``seat=None``) sees public facts only.
Bots are given exactly this, never the ``Game``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from protocol.cards import card_name, names_of
from server.core.rules import Game, HandPhase, PassDirection, points_in, trick_winner
from server.core.rules.game import Phase

DIRECTION_NAMES: dict[PassDirection, Literal["left", "right", "across", "none"]] = {
    PassDirection.LEFT: "left",
    PassDirection.RIGHT: "right",
    PassDirection.ACROSS: "across",
    PassDirection.NONE: "none",
}


def trick_record(trick: Sequence[int]) -> dict[str, Any]:
    """A finished trick ``(leader, c0..c3)`` as clients see it: the audit's shape plus the taker."""
    leader, cards = trick[0], trick[1:]
    return {"leader": leader, "cards": names_of_seq(cards), "winner": trick_winner(leader, cards)}


def game_view(game: Game, seat: int | None) -> dict[str, Any]:
    rules = game.rules
    hand = game.hand
    view: dict[str, Any] = {
        "rules": {
            "target": rules.target,
            "moon": rules.moon.value,
            "revokes": rules.revokes.value,
            "tie": rules.tie.value,
        },
        "phase": game.phase.value,
        "hand_number": game.hand_number,
        "scores": game.scores.copy(),
        "history": [h.copy() for h in game.history],
        "winners": game.winners.copy() if game.over else None,
        "playoff": game.playoff,
        "moon_chooser": game.moon_chooser if game.moon_chooser >= 0 else None,
        "seat": seat,
    }
    if hand is None:
        return view
    playing = hand.phase is HandPhase.PLAYING
    view.update(
        {
            "pass_direction": DIRECTION_NAMES[hand.direction],
            "passes_done": [bool(p) for p in hand.passes],
            "trick": {
                "leader": hand.leader if playing else None,
                "cards": names_of_seq(hand.trick),
            },
            "tricks": [trick_record(t) for t in hand.tricks],
            "hearts_broken": hand.hearts_broken,
            "turn": hand.turn if playing else None,
            "taken_points": [points_in(t) for t in hand.taken],
            "hand_cards_left": [h.bit_count() for h in hand.hands],
        }
    )
    if hand.revoke_call is not None:
        accuser, accused, guilty = hand.revoke_call
        view["revoke_call"] = {"accuser": accuser, "accused": accused, "guilty": guilty}
    if seat is not None:
        view["hand"] = names_of(hand.hands[seat])
        view["passed"] = names_of(hand.passes[seat]) if hand.passes[seat] else None
        received = hand.received(seat)
        view["received"] = names_of(received) if received else None
        if game.phase is Phase.PLAYING and hand.turn == seat:
            view["legal"] = names_of(game.legal_plays(seat))
        else:
            view["legal"] = []
    return view


def names_of_seq(cards: Sequence[int]) -> list[str]:
    """Card names in the given order (play order matters in a trick)."""
    return [card_name(c) for c in cards]
