"""A second search family for the sparring panel: information-set Monte-Carlo tree search.

Single-observer ISMCTS (Cowling, Powley and Whitehouse, 2012). One tree over the moves of all
four seats, from this seat's point of view. Each iteration samples a fresh deal of the hidden
cards (uniform among the deals that fit the voids shown: no inference from the style of play),
walks down the tree choosing, among the moves legal in that deal, the one with the best UCB1
score (its visits counted against how often it was available), adds one new node, plays the hand
out with a playout policy of its own (below, not ``policy.choose``), and credits every seat on
the path with its own points. The move from the root visited most is played.

The playout policy: lead the lowest card of a random suit; follow with the highest card that
still loses, else the lowest (last to a clean trick, the highest); out of the suit led, the queen
of spades, then the highest heart, then the highest card; one card in ten at random. It knows
nothing of moons: the tree finds moons, and stops them, by itself.

It is a sparring partner, not a level: it shows whether ``strong``'s edge holds against a search
that does not share its model of the others.
"""

from __future__ import annotations

import math
import random

from server.rules import HEARTS_MASK, SUIT_MASKS, Hand, points_in, trick_winner

from .knowledge import Knowledge
from .outcome import scored
from .playout import cards_of, strict_moves
from .worlds import NoWorld, sample_world

EXPLORE = 0.7  # UCB1 exploration constant, on rewards in [-1, 0] (points / 26)
RANDOM_PLAY = 0.1


class _Node:
    __slots__ = ("avail", "children", "reward", "visits")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.reward = 0.0  # summed reward of the seat that moved into this node
        self.visits = 0
        self.avail = 0


def _rollout_card(trick: list[int], legal: int, rng: random.Random) -> int:
    if rng.random() < RANDOM_PLAY:
        cards = cards_of(legal)
        return cards[int(rng.random() * len(cards))]
    if not trick:
        suits = [s for s in range(4) if legal & SUIT_MASKS[s]]
        m = legal & SUIT_MASKS[suits[int(rng.random() * len(suits))]]
        return (m & -m).bit_length() - 1
    suit = SUIT_MASKS[trick[0] // 13]
    follow = legal & suit
    if follow:
        win = max(c for c in trick if (1 << c) & suit)
        below = follow & ((1 << win) - 1)
        if below:
            return below.bit_length() - 1
        if len(trick) == 3 and not any(c >= 36 and (c == 36 or c >= 39) for c in trick):
            return follow.bit_length() - 1
        return (follow & -follow).bit_length() - 1
    if legal >> 36 & 1:
        return 36
    hearts = legal & HEARTS_MASK
    if hearts:
        return hearts.bit_length() - 1
    best, rank = -1, -1
    for s in range(4):
        m = legal & SUIT_MASKS[s]
        if m and (m.bit_length() - 1) - 13 * s > rank:
            best, rank = m.bit_length() - 1, (m.bit_length() - 1) - 13 * s
    return best


def facts_contradict(k: Knowledge) -> bool:
    """No deal fits every fact (a revoke faked a void): sample trusting only the leading rules."""
    try:
        sample_world(k, random.Random(0))
    except NoWorld:
        return True
    return False


def ismcts_play(k: Knowledge, legal: int, iterations: int, rng: random.Random) -> int:
    """The card to play from ``legal`` (several cards) after ``iterations`` tree walks."""
    relaxed = facts_contradict(k)
    root = _Node()
    rules, scores = k.rules, k.scores
    start: Hand | None = None
    for _ in range(iterations):
        world = sample_world(k, rng, relaxed=relaxed)
        if start is None:
            # The rules engine reads the position once (who leads, what is taken, whether
            # hearts are broken): only the hidden cards differ between walks. Each walk then
            # plays on masks with the standard rules inline, as ``Hand`` does (a test compares).
            start = Hand.from_position(world, k.tricks, k.trick)
        hands = list(world)
        taken = list(start.taken)
        trick = list(start.trick)
        leader, seat = start.leader, start.turn
        broken = start.hearts_broken
        first_trick = not start.tricks
        tricks_left = 13 - len(start.tricks)
        node = root
        path: list[tuple[_Node, int]] = []  # (node entered, seat that moved into it)
        expanding = True
        while seat >= 0:
            hand = hands[seat]
            moves = strict_moves(
                hand, SUIT_MASKS[trick[0] // 13] if trick else 0, first_trick, broken
            )
            if seat == k.seat and node is root:
                moves &= legal
            if not expanding:
                if moves & (moves - 1):
                    card = _rollout_card(trick, moves, rng)
                else:
                    card = moves.bit_length() - 1
            else:
                children = node.children
                untried = [c for c in cards_of(moves) if c not in children]
                if untried:
                    card = untried[int(rng.random() * len(untried))]
                    child = children[card] = _Node()
                    expanding = False
                else:
                    best_score = -math.inf
                    card = -1
                    for c in cards_of(moves):
                        ch = children[c]
                        ch.avail += 1
                        score = ch.reward / ch.visits + EXPLORE * math.sqrt(
                            math.log(ch.avail) / ch.visits
                        )
                        if score > best_score:
                            best_score, card = score, c
                    child = children[card]
                path.append((child, seat))
                if not expanding:
                    child.avail += 1  # the new node was available this once
                node = child
            hands[seat] = hand ^ (1 << card)
            trick.append(card)
            if card >= 39:
                broken = True  # a heart played breaks hearts for the tricks after it
            if len(trick) < 4:
                seat = (seat + 1) & 3
                continue
            leader = seat = trick_winner(leader, trick)
            taken[seat] |= (1 << trick[0]) | (1 << trick[1]) | (1 << trick[2]) | (1 << trick[3])
            trick = []
            first_trick = False
            tricks_left -= 1
            if not tricks_left:
                seat = -1
        final = scored([points_in(t) for t in taken], scores, rules)
        for n, mover in path:
            n.visits += 1
            n.reward -= final[mover] / 26.0
    best = max(
        (c for c in cards_of(legal) if c in root.children),
        key=lambda c: (root.children[c].visits, root.children[c].reward, c),
    )
    return best
