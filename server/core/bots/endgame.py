"""The end of a hand solved exactly, in one sampled deal (perfect information).

Once few cards are left, a sampled deal can be played out exactly instead of by the card policy:
every seat, knowing every hand, plays the card that leaves it the fewest points at the end of
the hand, the table's moon rule applied (max-n, as the bridge programs GIB and the PIMC family
solve each sampled deal double-dummy). That takes the opponent model out of the part of the hand
where it matters most: who takes the queen and the last hearts, and whether a moon run is
stopped (a seat blocks a moon because the 26 it would take is its own points).

Ties (a seat whose own points are the same either way) go to the card that leaves the others
the most points, then to the lowest card. Cards of equal value (touching in one suit, nothing
between them left in another hand or on the table, the same points) are searched once. Results
are kept in a table keyed by the four hands, the trick in progress, its leader and the moon
state (which seat, if any, could still take every point: with it the points taken so far follow
from the cards left), so each position is solved once per deal.
"""

from __future__ import annotations

from collections.abc import Sequence

from server.core.rules import HEARTS_MASK, POINT_CARDS, SUIT_MASKS, Moon, Rules, points_in

from .outcome import choose_moon, moon_points
from .playout import cards_of

_NOT_HEARTS = ((1 << 52) - 1) & ~HEARTS_MASK
QUEEN = 36
NO_MOON = -2  # two seats have points: nobody can shoot
OPEN = -1  # nobody has a point yet

Points = tuple[int, int, int, int]


def moon_table(scores: Sequence[int], rules: Rules) -> list[Points]:
    """The scored points of a hand in which seat ``s`` shot the moon, for each ``s``."""
    out: list[Points] = []
    for s in range(4):
        choice = choose_moon(s, scores, rules) if rules.moon is Moon.SHOOTER_CHOOSES else rules.moon
        p = moon_points(s, choice)
        out.append((p[0], p[1], p[2], p[3]))
    return out


def moon_state(taken: Sequence[int]) -> int:
    holder = OPEN
    for s in range(4):
        if taken[s] & POINT_CARDS:
            if holder != OPEN:
                return NO_MOON
            holder = s
    return holder


class Solver:
    """Exact play of the rest of one deal. ``nodes`` counts the positions searched (a measure
    of the work, for the search's budget)."""

    __slots__ = ("memo", "moons", "nodes")

    def __init__(self, moons: list[Points]) -> None:
        self.memo: dict[tuple[int, int, int, int, tuple[int, ...], int, int], Points] = {}
        self.moons = moons
        self.nodes = 0

    def rest(
        self,
        hands: Sequence[int],
        trick: Sequence[int],
        leader: int,
        broken: bool,
        taken: Sequence[int],
        first: int = -1,
    ) -> Points:
        """The points each seat takes from here to the end of the hand (the trick in progress
        included), every seat playing its best; ``first``, if given, is the card the seat to
        move plays now."""
        m = moon_state(taken)
        h = (hands[0], hands[1], hands[2], hands[3])
        if first < 0:
            return self._node(h, tuple(trick), leader, broken, m)
        seat = (leader + len(trick)) & 3
        return self._after(h, tuple(trick), leader, broken, m, seat, first)

    def _after(
        self,
        h: tuple[int, int, int, int],
        trick: tuple[int, ...],
        leader: int,
        broken: bool,
        m: int,
        seat: int,
        card: int,
    ) -> Points:
        hands = list(h)
        hands[seat] ^= 1 << card
        t = (*trick, card)
        broken = broken or card >= 39
        if len(t) < 4:
            return self._node((hands[0], hands[1], hands[2], hands[3]), t, leader, broken, m)
        # The trick is complete: the highest card of the suit led takes it.
        suit = t[0] // 13
        best, top = 0, t[0]
        for i in (1, 2, 3):
            if t[i] // 13 == suit and t[i] > top:
                best, top = i, t[i]
        winner = (leader + best) & 3
        won = points_in((1 << t[0]) | (1 << t[1]) | (1 << t[2]) | (1 << t[3]))
        if won:
            if m == OPEN:
                m = winner
            elif m != winner:
                m = NO_MOON
        nh = (hands[0], hands[1], hands[2], hands[3])
        if not (nh[0] | nh[1] | nh[2] | nh[3]) & POINT_CARDS:
            later: Points = (0, 0, 0, 0)
        elif not nh[0] & (nh[0] - 1):
            later = _last_trick(nh, winner)  # one card each: nothing to choose
        else:
            later = self._node(nh, (), winner, broken, m)
        if not won:
            return later
        out = list(later)
        out[winner] += won
        return (out[0], out[1], out[2], out[3])

    def _node(
        self,
        h: tuple[int, int, int, int],
        trick: tuple[int, ...],
        leader: int,
        broken: bool,
        m: int,
    ) -> Points:
        # ``broken`` follows from the key (a heart in no hand has been played), so it is not in it.
        key = (h[0], h[1], h[2], h[3], trick, leader, m)
        found = self.memo.get(key)
        if found is not None:
            return found
        self.nodes += 1
        seat = (leader + len(trick)) & 3
        hand = h[seat]
        table = 0
        for c in trick:
            table |= 1 << c
        if trick:
            legal = hand & SUIT_MASKS[trick[0] // 13] or hand
        else:
            legal = hand if broken else (hand & _NOT_HEARTS or hand)
        # The points still to be taken, and the seat's own points so far (the moon's threshold).
        remaining = points_in(table | h[0] | h[1] | h[2] | h[3])
        best: Points | None = None
        best_own = best_all = 0
        moons = self.moons
        for card in self._choices(h, seat, legal, table):
            if len(trick) < 3:
                bit = 1 << card
                nh = (
                    h[0] ^ bit if seat == 0 else h[0],
                    h[1] ^ bit if seat == 1 else h[1],
                    h[2] ^ bit if seat == 2 else h[2],
                    h[3] ^ bit if seat == 3 else h[3],
                )
                r = self._node(nh, (*trick, card), leader, broken or card >= 39, m)
            else:
                r = self._after(h, trick, leader, broken, m, seat, card)
            # The hand's scored points (up to a constant per seat) if the rest goes as ``r``.
            f = r
            if m == OPEN:
                for s in (0, 1, 2, 3):
                    if r[s] == 26:
                        f = moons[s]
                        break
            elif m >= 0:
                if r[m] == remaining:
                    f = moons[m]
                else:
                    f = (
                        r[0] + 26 - remaining if m == 0 else r[0],
                        r[1] + 26 - remaining if m == 1 else r[1],
                        r[2] + 26 - remaining if m == 2 else r[2],
                        r[3] + 26 - remaining if m == 3 else r[3],
                    )
            own = f[seat]
            total = f[0] + f[1] + f[2] + f[3]
            if best is None or own < best_own or (own == best_own and total > best_all):
                best, best_own, best_all = r, own, total
        assert best is not None
        self.memo[key] = best
        return best

    @staticmethod
    def _choices(h: tuple[int, int, int, int], seat: int, legal: int, table: int) -> list[int]:
        """The legal cards, one of each class of equal cards."""
        others = table
        for s in range(4):
            if s != seat:
                others |= h[s]
        out: list[int] = []
        prev = -1
        for c in cards_of(legal):
            if (
                prev >= 0
                and prev // 13 == c // 13
                and not others & ((1 << c) - (1 << (prev + 1)))
                and c != QUEEN
                and prev != QUEEN
            ):
                prev = c
                continue
            out.append(c)
            prev = c
        return out


def _last_trick(h: tuple[int, int, int, int], leader: int) -> Points:
    """The points of the last trick, one card in each hand, ``leader`` leading."""
    suit = SUIT_MASKS[(h[leader].bit_length() - 1) // 13]
    winner, top = leader, h[leader]
    for s in (0, 1, 2, 3):
        if h[s] & suit and h[s] > top:
            winner, top = s, h[s]
    won = points_in(h[0] | h[1] | h[2] | h[3])
    return (
        won if winner == 0 else 0,
        won if winner == 1 else 0,
        won if winner == 2 else 0,
        won if winner == 3 else 0,
    )
