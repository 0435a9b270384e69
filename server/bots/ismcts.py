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

from server.rules import HEARTS_MASK, SUIT_MASKS, Hand, points_in

from .knowledge import Knowledge
from .outcome import scored
from .playout import cards_of
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


def _rollout_card(h: Hand, seat: int, legal: int, rng: random.Random) -> int:
    if rng.random() < RANDOM_PLAY:
        cards = cards_of(legal)
        return cards[int(rng.random() * len(cards))]
    trick = h.trick
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


def ismcts_play(k: Knowledge, legal: int, iterations: int, rng: random.Random) -> int:
    """The card to play from ``legal`` (several cards) after ``iterations`` tree walks."""
    relaxed = False
    try:
        sample_world(k, random.Random(0))
    except NoWorld:
        relaxed = True
    root = _Node()
    rules, scores = k.rules, k.scores
    for _ in range(iterations):
        world = sample_world(k, rng, relaxed=relaxed)
        h = Hand.from_position(world, k.tricks, k.trick)
        node = root
        path: list[tuple[_Node, int]] = []  # (node entered, seat that moved into it)
        expanding = True
        while h.turn >= 0:
            seat = h.turn
            moves = h.legal_plays(seat)
            if seat == k.seat and node is root:
                moves &= legal
            if not expanding:
                if moves & (moves - 1):
                    h.play(seat, _rollout_card(h, seat, moves, rng))
                else:
                    h.play(seat, moves.bit_length() - 1)
                continue
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
            h.play(seat, card)
            node = child
        final = scored([points_in(t) for t in h.taken], scores, rules)
        for n, seat in path:
            n.visits += 1
            n.reward -= final[seat] / 26.0
    best = max(
        (c for c in cards_of(legal) if c in root.children),
        key=lambda c: (root.children[c].visits, root.children[c].reward, c),
    )
    return best
