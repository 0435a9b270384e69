"""What one seat knows, read from its view and nothing else, as bitmask facts.

A bot is given the dict ``game_view(game, seat)`` returns, the same one a human client receives,
and this module is the only place that reads it. Everything the search needs is derived here:
the seat's cards, every card played and by whom, the suits a seat has shown it is out of, the
cards a seat must still hold because we passed them to it, and how many cards each seat holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from protocol.cards import mask_of_names, parse_card
from server.core.rules import (
    HEARTS_MASK,
    POINT_CARDS,
    QUEEN_OF_SPADES,
    SUIT_MASKS,
    Rules,
    trick_winner,
)

FULL_DECK = (1 << 52) - 1
QUEEN_BIT = 1 << QUEEN_OF_SPADES
DIRECTION_OFFSETS = {"none": 0, "left": 1, "across": 2, "right": 3}


@dataclass(slots=True)
class Knowledge:
    """Facts one seat knows about the hand in progress. Sets of cards are 52-bit masks."""

    seat: int
    rules: Rules
    phase: str
    hand_number: int
    scores: list[int]
    direction: int  # the receiver's seat offset: 0 none, 1 left, 2 across, 3 right
    hand: int  # the seat's own cards now
    view_legal: int  # the cards the view says may be played (all of them when revokes allowed)
    tricks: list[tuple[int, int, int, int, int]]  # completed: (leader, c0, c1, c2, c3)
    trick: list[int]  # the trick in progress, in play order
    leader: int  # who led the trick in progress (-1 before play)
    turn: int  # whose turn it is (-1 when nobody plays)
    played: int  # every card played this hand
    played_by: list[int]  # the cards each seat has played
    taken: list[int]  # the cards each seat has taken in tricks
    counts: list[int]  # cards each seat holds now
    hearts_broken: bool
    passed: int  # the cards this seat passed (0 before choosing, or with no pass)
    received: int  # the cards this seat was passed (0 until the pass completes)
    has: list[int]  # cards a seat must hold: ours, and what we passed to a seat, unless played
    cannot: list[int]  # cards a seat cannot hold: the suits it has shown out of, and the like
    shown_cannot: list[int]  # only the facts a table that allows revokes cannot fake
    moon_chooser: int  # the seat choosing how a moon scores, or -1
    passes_done: list[bool]
    unseen: int  # cards some other seat holds, placed or not
    unplaced: int  # cards some other seat holds without our knowing which one

    @property
    def pass_to(self) -> int:
        return (self.seat + self.direction) & 3

    @property
    def pass_from(self) -> int:
        return (self.seat - self.direction) & 3

    @property
    def first_trick(self) -> bool:
        return not self.tricks

    @property
    def queen_out(self) -> bool:
        """The queen of spades has not been played yet."""
        return not self.played & QUEEN_BIT

    def points_taken(self) -> list[int]:
        return [(t & HEARTS_MASK).bit_count() + (13 if t & QUEEN_BIT else 0) for t in self.taken]

    def moon_runner(self) -> int:
        """The one seat that has taken every point card played so far (-1 if none or several)."""
        runner = -1
        for s in range(4):
            if self.taken[s] & POINT_CARDS:
                if runner >= 0:
                    return -1
                runner = s
        return runner


def _names(value: Any) -> int:
    return mask_of_names(value) if value else 0


def knowledge_of(view: dict[str, Any]) -> Knowledge:
    """Read a seat's view (``server.core.room.game_view.game_view``) into bitmask facts."""
    seat = view.get("seat")
    if seat is None:
        raise ValueError("a bot decides for a seat: the view must be a seat's view")
    r = view["rules"]
    rules = Rules(r["target"], r["moon"], r["revokes"], r["tie"])
    hand = _names(view.get("hand"))
    direction = DIRECTION_OFFSETS[view.get("pass_direction", "none")]
    tricks: list[tuple[int, int, int, int, int]] = []
    for t in view.get("tricks", []):
        c = [parse_card(n) for n in t["cards"]]
        tricks.append((t["leader"], c[0], c[1], c[2], c[3]))
    current = view.get("trick") or {}
    trick = [parse_card(n) for n in current.get("cards", [])]
    leader = current.get("leader")
    turn = view.get("turn")
    counts = list(view.get("hand_cards_left", [13, 13, 13, 13]))

    played = 0
    played_by = [0, 0, 0, 0]
    taken = [0, 0, 0, 0]
    cannot = [0, 0, 0, 0]
    shown = [0, 0, 0, 0]  # facts from the leading rules, which hold even when revokes are allowed
    broken = False
    sequences: list[tuple[int, list[int], int]] = []
    for t in tricks:
        sequences.append((t[0], list(t[1:]), trick_winner(t[0], t[1:])))
    if trick:
        sequences.append((leader if leader is not None else -1, trick, -1))
    for number, (lead_seat, cards, winner) in enumerate(sequences):
        led = cards[0] // 13
        for i, card in enumerate(cards):
            s = (lead_seat + i) & 3
            played |= 1 << card
            played_by[s] |= 1 << card
            if i == 0:
                if card // 13 == 3 and not broken and number > 0:
                    # A heart led before hearts broke: that hand was nothing but hearts.
                    shown[s] |= ~HEARTS_MASK & FULL_DECK
            elif card // 13 != led:
                cannot[s] |= SUIT_MASKS[led]  # did not follow: out of the suit led
                if number == 0 and (1 << card) & POINT_CARDS:
                    # Points on the first trick are allowed only from a hand of nothing else.
                    cannot[s] |= FULL_DECK & ~POINT_CARDS
        for card in cards:
            if card // 13 == 3:
                broken = True
        if winner >= 0:
            taken[winner] |= sum(1 << c for c in cards)
    for s in range(4):
        cannot[s] |= shown[s]

    passed = _names(view.get("passed"))
    received = _names(view.get("received"))
    me = int(seat)
    has = [0, 0, 0, 0]
    has[me] = hand
    if passed and direction and view.get("phase") != "passing":
        has[(me + direction) & 3] |= passed & ~played
    for s in range(4):
        if s != me:
            # A fact from play never contradicts a card we know a seat holds.
            cannot[s] &= ~has[s]
            shown[s] &= ~has[s]
    cannot[me] = FULL_DECK & ~hand
    shown[me] = cannot[me]
    unseen = FULL_DECK & ~played & ~hand
    placed = 0
    for s in range(4):
        if s != me:
            placed |= has[s]

    return Knowledge(
        seat=me,
        rules=rules,
        phase=view["phase"],
        hand_number=view.get("hand_number", 0),
        scores=list(view.get("scores", [0, 0, 0, 0])),
        direction=direction,
        hand=hand,
        view_legal=_names(view.get("legal")),
        tricks=tricks,
        trick=trick,
        leader=leader if leader is not None else -1,
        turn=turn if turn is not None else -1,
        played=played,
        played_by=played_by,
        taken=taken,
        counts=counts,
        hearts_broken=bool(view.get("hearts_broken", broken)),
        passed=passed,
        received=received,
        has=has,
        cannot=cannot,
        shown_cannot=shown,
        moon_chooser=view["moon_chooser"] if view.get("moon_chooser") is not None else -1,
        passes_done=list(view.get("passes_done", [False] * 4)),
        unseen=unseen,
        unplaced=unseen & ~placed,
    )
