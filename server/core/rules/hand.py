"""One hand of Hearts: the pass, thirteen tricks, the points taken.

A ``Hand`` is mutable in the way ``chess.Board`` is: moves are applied in place after they are
checked, ``copy()`` gives an independent value, and ``to_value()`` / ``from_value()`` turn it into
plain ints and lists for storage. Every check runs before any change, so a refused move changes
nothing.

Cards are ints 0..51 and sets of cards are ints with one bit per card (see ``protocol.cards``),
so the legal set and the trick winner are a handful of integer operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Any

from protocol.cards import card_name

from .errors import IllegalMove

SUIT_MASKS: tuple[int, int, int, int] = tuple(0x1FFF << (13 * s) for s in range(4))  # type: ignore[assignment]
CLUBS_MASK, DIAMONDS_MASK, SPADES_MASK, HEARTS_MASK = SUIT_MASKS
FULL_DECK = (1 << 52) - 1
TWO_OF_CLUBS = 0
QUEEN_OF_SPADES = 36
QUEEN_BIT = 1 << QUEEN_OF_SPADES
POINT_CARDS = HEARTS_MASK | QUEEN_BIT
FIRST_HEART = 39
TRICKS_PER_HAND = 13


class PassDirection(IntEnum):
    """Where a seat's three cards go; the value is the receiver's seat offset (clockwise)."""

    NONE = 0
    LEFT = 1
    ACROSS = 2
    RIGHT = 3

    @classmethod
    def for_hand(cls, hand_number: int) -> PassDirection:
        """Hand 1 passes left, 2 right, 3 across, 4 keeps, then the cycle repeats."""
        return _CYCLE[(hand_number - 1) % 4]


_CYCLE = (PassDirection.LEFT, PassDirection.RIGHT, PassDirection.ACROSS, PassDirection.NONE)


class HandPhase(IntEnum):
    PASSING = 0
    PLAYING = 1
    OVER = 2


def points_in(cards: int) -> int:
    """Hearts count one each, the queen of spades thirteen."""
    return (cards & HEARTS_MASK).bit_count() + (13 if cards & QUEEN_BIT else 0)


def trick_winner(leader: int, cards: Sequence[int]) -> int:
    """The seat whose card is the highest of the suit led (cards in play order from ``leader``)."""
    led = cards[0] // 13
    best = 0
    for i in range(1, len(cards)):
        c = cards[i]
        if c // 13 == led and c > cards[best]:
            best = i
    return (leader + best) & 3


_PLAYING = HandPhase.PLAYING


class Hand:
    """A hand from the deal to the last trick (or to a revoke call that ends it)."""

    __slots__ = (
        "_legal",
        "dealt",
        "direction",
        "hands",
        "hearts_broken",
        "leader",
        "passes",
        "phase",
        "revoke_call",
        "revoked",
        "revokes_allowed",
        "taken",
        "trick",
        "tricks",
        "turn",
    )

    dealt: tuple[int, int, int, int]
    direction: PassDirection
    hands: list[int]
    passes: list[int]
    phase: HandPhase
    leader: int
    turn: int
    trick: list[int]
    tricks: list[tuple[int, int, int, int, int]]
    hearts_broken: bool
    taken: list[int]
    revoked: int
    revoke_call: tuple[int, int, bool] | None
    revokes_allowed: bool
    _legal: int

    @classmethod
    def deal(
        cls,
        hands: Sequence[int],
        direction: PassDirection = PassDirection.LEFT,
        *,
        revokes_allowed: bool = False,
    ) -> Hand:
        """Start a hand from four 13-card sets that together make the deck."""
        if len(hands) != 4:
            raise ValueError("a deal is four hands")
        union = 0
        for h in hands:
            if h.bit_count() != 13 or h & union or h & ~FULL_DECK:
                raise ValueError("a deal is four disjoint hands of 13 cards from one deck")
            union |= h
        self = cls.__new__(cls)
        self.dealt = (hands[0], hands[1], hands[2], hands[3])
        self.direction = PassDirection(direction)
        self.hands = list(hands)
        self.passes = [0, 0, 0, 0]
        self.trick = []
        self.tricks = []
        self.hearts_broken = False
        self.taken = [0, 0, 0, 0]
        self.revoked = 0
        self.revoke_call = None
        self.revokes_allowed = revokes_allowed
        self._legal = -1
        if self.direction is PassDirection.NONE:
            self._begin_play()
        else:
            self.phase = HandPhase.PASSING
            self.leader = self.turn = -1
        return self

    @classmethod
    def from_position(
        cls,
        hands: Sequence[int],
        tricks: Sequence[Sequence[int]] = (),
        trick: Sequence[int] = (),
        *,
        revokes_allowed: bool = False,
    ) -> Hand:
        """A hand in play from the cards each seat holds now and the plays so far.

        ``tricks`` are the completed tricks as ``(leader, c0, c1, c2, c3)`` in play order and
        ``trick`` the cards of the trick in progress. Everything else follows from them: who took
        what, whether hearts are broken, who leads and whose turn it is. The plays are taken as
        given, not replayed, so a position from a revokes-allowed table is accepted; the pass is
        not part of a position (``direction`` is NONE and ``dealt`` is the holdings when play
        began). Bots build sampled deals with it, so it checks that the cards add up and nothing
        more expensive.
        """
        if len(hands) != 4 or len(tricks) > TRICKS_PER_HAND or len(trick) > 3:
            raise ValueError("a position is four hands, at most 13 tricks and 0-3 cards in play")
        if len(tricks) == TRICKS_PER_HAND and trick:
            raise ValueError("no trick is in progress after the thirteenth")
        self = cls.__new__(cls)
        taken = [0, 0, 0, 0]
        played_by = [0, 0, 0, 0]
        seen = 0
        count = 0
        leader = -1
        for t in tricks:
            if leader >= 0 and t[0] != leader:
                raise ValueError("each trick is led by the taker of the one before")
            leader, cards = t[0], t[1:]
            if len(cards) != 4:
                raise ValueError("a completed trick is a leader and four cards")
            for i, c in enumerate(cards):
                played_by[(leader + i) & 3] |= 1 << c
                seen |= 1 << c
            count += 4
            winner = trick_winner(leader, cards)
            taken[winner] |= (1 << cards[0]) | (1 << cards[1]) | (1 << cards[2]) | (1 << cards[3])
            leader = winner
        left = TRICKS_PER_HAND - len(tricks)
        if leader < 0:
            # First trick: the seats that already played to it hold one card fewer.
            leader = next(
                (
                    s
                    for s in range(4)
                    if all(
                        hands[(s + i) & 3].bit_count() == left - (i < len(trick)) for i in range(4)
                    )
                    and (trick or hands[s] & 1)
                ),
                -1,
            )
            if leader < 0:
                raise ValueError("cannot tell who leads the first trick")
        for i, c in enumerate(trick):
            played_by[(leader + i) & 3] |= 1 << c
            seen |= 1 << c
        count += len(trick)
        union = 0
        for h in hands:
            if h & union:
                raise ValueError("a card is in two hands")
            union |= h
        if union & seen or (union | seen) != FULL_DECK or seen.bit_count() != count:
            raise ValueError("the hands and the cards played must make one deck, each card once")
        for s in range(4):
            if hands[s].bit_count() != left - (((s - leader) & 3) < len(trick)):
                raise ValueError("each seat must hold one card per trick still to play")
        self.dealt = (
            hands[0] | played_by[0],
            hands[1] | played_by[1],
            hands[2] | played_by[2],
            hands[3] | played_by[3],
        )
        self.direction = PassDirection.NONE
        self.hands = list(hands)
        self.passes = [0, 0, 0, 0]
        self.trick = list(trick)
        self.tricks = [(t[0], t[1], t[2], t[3], t[4]) for t in tricks]
        self.hearts_broken = bool(seen & HEARTS_MASK)
        self.taken = taken
        self.revoked = 0
        self.revoke_call = None
        self.revokes_allowed = revokes_allowed
        self._legal = -1
        self.leader = leader
        if len(tricks) == TRICKS_PER_HAND:
            self.phase = HandPhase.OVER
            self.turn = -1
        else:
            self.phase = HandPhase.PLAYING
            self.turn = (leader + len(trick)) & 3
        return self

    # -- queries ---------------------------------------------------------------------------

    @property
    def tricks_played(self) -> int:
        return len(self.tricks)

    @property
    def is_over(self) -> bool:
        return self.phase is HandPhase.OVER

    def received(self, seat: int) -> int:
        """The cards ``seat`` was passed (0 until everyone has passed, or with no pass)."""
        if self.phase is HandPhase.PASSING or self.direction is PassDirection.NONE:
            return 0
        return self.passes[(seat - self.direction) & 3]

    def legal_plays(self, seat: int) -> int:
        """The set of cards ``seat`` may play now (empty when it is not that seat's turn)."""
        if seat != self.turn or self.phase is not _PLAYING:
            return 0
        legal = self._legal
        if legal < 0:
            legal = self._legal = self._allowed() if self.revokes_allowed else self._strict()
        return legal

    def points(self) -> list[int]:
        """Points each seat took this hand (a revoke call's 26 included), before any moon rule."""
        if self.revoke_call is not None:
            accuser, accused, guilty = self.revoke_call
            loser = accused if guilty else accuser
            return [26 if s == loser else 0 for s in range(4)]
        return [points_in(t) for t in self.taken]

    def shooter(self) -> int | None:
        """The seat that took every point card, if one did (never after a revoke call)."""
        if self.revoke_call is not None:
            return None
        for seat in range(4):
            if self.taken[seat] & POINT_CARDS == POINT_CARDS:
                return seat
        return None

    # -- moves -----------------------------------------------------------------------------

    def choose_pass(self, seat: int, cards: int) -> bool:
        """Seat ``seat`` passes the three cards in ``cards``. True when this completed the pass."""
        if self.phase is not HandPhase.PASSING:
            raise IllegalMove("wrong_phase", "It is not time to pass cards.")
        if self.passes[seat]:
            raise IllegalMove("already_passed", "You have already chosen your three cards.")
        if cards.bit_count() != 3:
            raise IllegalMove("bad_pass", "Pass exactly three cards.")
        if cards & ~self.hands[seat]:
            raise IllegalMove("card_not_in_hand", "You can only pass cards from your hand.")
        passes = self.passes.copy()  # replaced, not changed: copies of the hand share it
        passes[seat] = cards
        self.passes = passes
        if not all(passes):
            return False
        # The cards change hands only now, when all four have chosen.
        off = self.direction
        hands, passes = self.hands, self.passes
        for s in range(4):
            hands[s] = (hands[s] & ~passes[s]) | passes[(s - off) & 3]
        self._begin_play()
        return True

    def play(self, seat: int, card: int) -> int:
        """Play ``card`` for ``seat``. Returns the trick's winner when it completed one, else -1."""
        if seat != self.turn or self.phase is not _PLAYING:
            if self.phase is not _PLAYING:
                raise IllegalMove("wrong_phase", "It is not time to play a card.")
            raise IllegalMove("not_your_turn", "It is not your turn.")
        bit = 1 << card
        legal = self._legal
        if legal < 0:
            legal = self.legal_plays(seat)
        if not legal & bit:
            if not self.hands[seat] & bit:
                raise IllegalMove("card_not_in_hand", f"{card_name(card)} is not in your hand.")
            raise self._refusal(card)
        if self.revokes_allowed and not self._strict() & bit:
            self.revoked |= 1 << seat
        self.hands[seat] ^= bit
        trick = self.trick
        trick.append(card)
        self._legal = -1
        if card >= FIRST_HEART:
            # A heart played to any trick breaks hearts for the tricks after it.
            self.hearts_broken = True
        if len(trick) < 4:
            self.turn = (seat + 1) & 3
            return -1
        # The trick is complete: the highest card of the suit led takes it (inlined: hot path).
        c0, c1, c2, c3 = trick
        led = c0 // 13
        best, top = 0, c0
        if c1 // 13 == led and c1 > top:
            best, top = 1, c1
        if c2 // 13 == led and c2 > top:
            best, top = 2, c2
        if c3 // 13 == led and c3 > top:
            best = 3
        leader = self.leader
        winner = (leader + best) & 3
        # Replaced, not changed: copies of the hand share them (``copy``).
        taken = self.taken.copy()
        taken[winner] |= (1 << c0) | (1 << c1) | (1 << c2) | (1 << c3)
        self.taken = taken
        tricks = self.tricks = [*self.tricks, (leader, c0, c1, c2, c3)]
        trick.clear()
        self.leader = self.turn = winner
        if len(tricks) == TRICKS_PER_HAND:
            self.phase = HandPhase.OVER
            self.turn = -1
        return winner

    def call_revoke(self, accuser: int, accused: int) -> bool:
        """Judge a revoke call (revokes allowed only); the hand ends at once. True if guilty."""
        if not self.revokes_allowed:
            raise IllegalMove("revokes_blocked", "This table does not allow revokes to be called.")
        if self.phase is not HandPhase.PLAYING:
            raise IllegalMove("wrong_phase", "A revoke can only be called while tricks are played.")
        if accuser == accused or not (0 <= accused < 4):
            raise IllegalMove("bad_revoke_call", "Call a revoke on one of the other three seats.")
        guilty = bool(self.revoked >> accused & 1)
        self.revoke_call = (accuser, accused, guilty)
        self.phase = HandPhase.OVER
        self.turn = -1
        self._legal = -1
        return guilty

    # -- internals -------------------------------------------------------------------------

    def _begin_play(self) -> None:
        self.phase = HandPhase.PLAYING
        for seat in range(4):
            if self.hands[seat] & 1:  # the 2 of clubs, after the pass
                self.leader = self.turn = seat
                break
        self._legal = -1

    def _strict(self) -> int:
        """The cards the standard rules allow the seat to move to play (no revokes)."""
        hand = self.hands[self.turn]
        trick = self.trick
        if not trick:
            if not self.tricks:
                return 1  # the 2 of clubs opens the hand
            if self.hearts_broken:
                return hand
            # Unbroken: anything but a heart; the queen of spades counts as "anything".
            return (hand & ~HEARTS_MASK) or hand
        follow = hand & SUIT_MASKS[trick[0] // 13]
        if follow:
            return follow
        if not self.tricks:
            return (hand & ~POINT_CARDS) or hand
        return hand

    def _allowed(self) -> int:
        """Revokes allowed: the leading rules hold, any card may be played when following."""
        return self.hands[self.turn] if self.trick else self._strict()

    def _refusal(self, card: int) -> IllegalMove:
        """Why ``card`` is not legal now, in the words a player needs."""
        name = card_name(card)
        if not self.trick:
            if not self.tricks:
                return IllegalMove("must_lead_two_of_clubs", "The first trick must be led with 2C.")
            return IllegalMove(
                "hearts_not_broken", f"You cannot lead {name}: hearts have not been broken yet."
            )
        suit = ("clubs", "diamonds", "spades", "hearts")[self.trick[0] // 13]
        if self.hands[self.turn] & SUIT_MASKS[self.trick[0] // 13]:
            return IllegalMove(
                "must_follow_suit", f"You must follow suit: play one of your {suit}."
            )
        return IllegalMove(
            "no_points_on_first_trick",
            f"You cannot play {name} to the first trick: no hearts or QS on trick 1 while you "
            "hold another card.",
        )

    # -- values ----------------------------------------------------------------------------

    def copy(self) -> Hand:
        # Field by field, not a loop over __slots__ with getattr and setattr: a room copies its
        # hand at every step. The cards held and the trick are copied; the passes, the points
        # taken and the finished tricks are shared (replaced when they change, never changed
        # in place); everything else is immutable.
        other = Hand.__new__(Hand)
        other._legal = self._legal
        other.dealt = self.dealt
        other.direction = self.direction
        other.hands = self.hands.copy()
        other.hearts_broken = self.hearts_broken
        other.leader = self.leader
        other.passes = self.passes
        other.phase = self.phase
        other.revoke_call = self.revoke_call
        other.revoked = self.revoked
        other.revokes_allowed = self.revokes_allowed
        other.taken = self.taken
        other.trick = self.trick.copy()
        other.tricks = self.tricks
        other.turn = self.turn
        return other

    def to_value(self) -> list[object]:
        """Plain ints and lists (msgpack- and JSON-friendly) that ``from_value`` restores."""
        return [
            int(self.direction),
            list(self.dealt),
            list(self.passes),
            [list(t) for t in self.tricks],
            list(self.trick),
            list(self.revoke_call) if self.revoke_call else None,
            self.revokes_allowed,
        ]

    @classmethod
    def from_value(cls, value: Sequence[Any]) -> Hand:
        """Rebuild a hand by replaying its moves on the deal, so a stored hand is always legal."""
        direction, dealt, passes, tricks, trick, revoke_call, revokes_allowed = value
        hand = cls.deal(
            dealt,
            PassDirection(direction),
            revokes_allowed=bool(revokes_allowed),
        )
        if hand.phase is HandPhase.PASSING:
            for seat, cards in enumerate(passes):
                if cards:
                    hand.choose_pass(seat, cards)
        for t in tricks:
            for i in range(4):
                hand.play((t[0] + i) & 3, t[1 + i])
        for card in trick:
            hand.play(hand.turn, card)
        if revoke_call:
            hand.call_revoke(revoke_call[0], revoke_call[1])
        return hand

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hand):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in Hand.__slots__ if n != "_legal")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<Hand {self.phase.name.lower()} tricks={len(self.tricks)} turn={self.turn} "
            f"hearts_broken={self.hearts_broken}>"
        )
