"""Strong's card search: information-set tree walks, compiled where a C compiler was at hand.

The search of the sparring partner ``ismcts`` (single-observer ISMCTS: a fresh deal
of the hidden cards per walk, UCB1 among the moves legal in that deal, one tree for all four
seats, each crediting its own points), at 240 times its walks. The flat race of ``search.py``
plays every seat by one card policy; against players who do not play by it, it reads their
cards and values its own cards wrongly (docs/bots.md, the sparring panel). A tree decides every
seat's moves by searching them, so it assumes nothing about how the others play, and more walks
make it stronger (docs/bots.md has the runs).

Strong's walks differ from the partner's in two things, table sense rather than a model of
any player: the playout's card policy (``SAFE_LEAD``: no lead of the queen of spades or a spade
above her while she is out, no taking a clean trick with her when a lower card of the suit
takes it, the ace and king of spades thrown before the hearts while she is out, and the lead of
the card fewest of the others' cards can duck under) and deals weighed by who holds her
(``worlds.queen_doubt``: a seat that passed up a free dump of her is five times less likely to
hold her for each time, by rejection in ``doubted_deal``) and, after a pass, by the suit lengths
a pass leaves (``pass_prior``: a pool of deals drawn once, each walk taking one in proportion to
its weight, the queen's doubt then a weight too).

``walk`` runs in ``_walks.c`` when that extension was built (``pip install`` compiles it; it is
optional) and otherwise in ``_walk_python`` below: the same algorithm with the same random
numbers (a splitmix64 stream, not ``random.Random``), so both give the same statistics, card for
card (``tests/core/bots/test_bots_panel.py``); only the speed differs. Decisions stay deterministic
per position and seed. The caller's ``stop`` bounds the walks in batches: on a machine without the
extension, or too loaded, the search answers with its best so far.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from server.core.rules import HEARTS_MASK, SUIT_MASKS, Hand, points_in, trick_winner

from .knowledge import FULL_DECK, QUEEN_BIT, Knowledge
from .outcome import scored
from .pass_prior import LengthPrior, length_prior
from .playout import cards_of, strict_moves
from .search import Option, SearchResult, equal_classes
from .worlds import NoWorld, Sampler, deal, placeholder_world, queen_doubt, sampler_of

_walks: Any
try:
    import server.core.bots._walks as _walks  # type: ignore[import-not-found, no-redef, unused-ignore]
except ImportError:  # no compiler when installed: the pure-Python walks, the same results
    _walks = None

COMPILED = _walks is not None
EXPLORE = 0.7  # UCB1 exploration constant, on rewards in [-1, 0] (points / 26)
RANDOM_PLAY = 0.1  # the playout's random cards, as the sparring partner's
BATCH = 1000  # walks between two looks at the caller's clock
SETTLE = 250  # walks between two looks at whether the most walked card can still be caught
# The walks' statistical settling (``settled_by_confidence``): from ``CONFIDENCE_MIN_WALKS``
# walks on, the walks end once the most walked card's mean leads every other card's mean, less
# ``TOLERANCE``, by ``CONFIDENCE`` standard errors of the difference. Off for strong (0): every
# setting measured played worse than the whole budget, by 1.25 standard errors at 4 (a third
# less CPU) and more below (docs/bots.md, round 24). ``MEASURED_CONFIDENCE`` is the setting
# that came closest, for the tests and the next try.
CONFIDENCE = 0.0
MEASURED_CONFIDENCE = 4.0
CONFIDENCE_MIN_WALKS = 4000
TOLERANCE = 0.0
MAX_REDEALS = 32  # deals drawn again for a doubted queen, at most, before one is kept
POOL = 4096  # deals drawn once and weighed, when the walks weigh their deals by the pass
# The playout's card policy (``rollout_card`` in ``_walks.c``): the sparring partner's; or with
# the table sense about the queen of spades every player has (no lead of her or a spade above
# her while she is out, no taking a clean trick with her when another card of the suit takes it,
# the ace and king of spades discarded before hearts while she is out); or strong's, which also
# leads its safest card (``SAFE_LEAD``: the lowest of the suit where the fewest of the others'
# cards lie below it, rather than the lowest of a random suit).
SPARRING, TABLE_SENSE, SAFE_LEAD = 0, 1, 2
STRONG_POLICY = SAFE_LEAD
_MASK64 = (1 << 64) - 1
_OVER_QUEEN = (1 << 37) | (1 << 38)
_LOW_SPADES = SUIT_MASKS[2] & (QUEEN_BIT - 1)

Start = tuple[tuple[int, ...], tuple[int, ...], int, int, int, int, int]


@dataclass(slots=True, frozen=True)
class Root:
    """One card at the root after the walks: how often it was walked, its summed reward (minus
    this seat's points / 26 per walk), and in how many walks this seat shot the moon."""

    card: int
    visits: int
    reward: float
    moons: int


class _Rng:
    """splitmix64 with 53-bit floats: the stream ``_walks.c`` draws, bit for bit."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK64

    def random(self) -> float:
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        z ^= z >> 31
        return (z >> 11) * (1.0 / 9007199254740992.0)


def start_of(k: Knowledge) -> Start:
    """The position the walks start from, read once through the rules engine."""
    h = Hand.from_position(placeholder_world(k), k.tricks, k.trick)
    return (
        tuple(h.taken), tuple(h.trick), h.leader, h.turn, int(h.hearts_broken),
        int(not h.tricks), 13 - len(h.tricks),
    )  # fmt: skip


def moon_table(k: Knowledge) -> tuple[int, ...]:
    """For each shooter, every seat's points with the table's moon rule: 16 numbers."""
    out: list[int] = []
    for s in range(4):
        out.extend(scored([26 if t == s else 0 for t in range(4)], k.scores, k.rules))
    return tuple(out)


def _walk_runner() -> Callable[..., tuple[list[tuple[int, int, float, int]], float]]:
    """``_walks.walk`` where it was compiled, else its Python twin (looked up per call, so a
    test can set ``_walks`` to None)."""
    return _walks.walk if _walks is not None else _walk_python


def walk_roots(
    k: Knowledge,
    legal: int,
    iterations: int,
    seed: int,
    stop: Callable[[], bool] | None = None,
    settle: bool = True,
    policy: int = SPARRING,
    doubt: tuple[float, float, float, float] | None = None,
    prior: LengthPrior | None = None,
    confidence: float = 0.0,
    min_walks: int = 0,
    tolerance: float = 0.0,
) -> list[Root]:
    """Every card of ``legal`` the walks tried, after ``iterations`` walks (fewer if ``stop``,
    asked every ``BATCH`` walks, says time is up: the tree so far answers). With ``settle``
    the walks also end once the most walked card leads the next by more than the walks left
    (looked at every ``SETTLE`` walks): the rest could not change the card played
    (``best_root``), only the statistics of the others. ``policy`` is the playout's card
    policy; ``doubt`` (``queen_doubt``), if given, weighs each deal by who holds the queen of
    spades in it; ``prior`` (``pass_prior``), if given, by the suit lengths the pass left each
    seat: the walks then draw ``POOL`` deals (at most one a walk) first and each walk takes one
    of them with chance in proportion to its weight, the queen's doubt included. With
    ``settle`` and ``confidence`` (0: never) the walks also end, from ``min_walks`` on, once the
    most walked card's mean leads every other card's by ``confidence`` standard errors
    (``settled_by_confidence``)."""
    try:
        sampler = sampler_of(k)
    except NoWorld:
        sampler = sampler_of(k, relaxed=True)
    start, moon = start_of(k), moon_table(k)
    run = _walk_runner()
    settle_every = SETTLE if settle else 0
    args = (
        sampler, start, k.seat, legal, iterations, seed, EXPLORE, RANDOM_PLAY, moon, stop, BATCH,
        settle_every, policy, doubt,
    )  # fmt: skip
    weights = None if prior is None else (prior.played, prior.weights)
    if confidence > 0.0 and settle:
        rows, _ = run(*args, weights, confidence, min_walks, tolerance)
    else:
        rows, _ = run(*args) if weights is None else run(*args, weights)
    return [Root(*r) for r in rows]


def walk_price(
    sampler: Sampler, start: Start, me: int, iterations: int, seed: int, moon: tuple[int, ...]
) -> float:
    """``me``'s mean points over ``iterations`` walks of strong's search from ``start`` (every
    card legal at the root, no early end), the table's moon rule applied: what a position is
    worth to that seat when every seat plays it by the walks (``priced_pass``)."""
    run = _walk_runner()
    args = (
        sampler, start, me, FULL_DECK, iterations, seed, EXPLORE, RANDOM_PLAY, moon, None, BATCH,
        0, STRONG_POLICY, None,
    )  # fmt: skip
    _, own = run(*args)
    return float(own) / iterations


def _rank(r: Root) -> tuple[int, float, int]:
    return r.visits, r.reward, r.card


def best_root(roots: list[Root]) -> Root:
    """The most walked card (then the best reward, then the highest card)."""
    return max(roots, key=_rank)


def walk_search(
    k: Knowledge,
    legal: int,
    iterations: int,
    seed: int,
    stop: Callable[[], bool] | None = None,
    confidence: float = CONFIDENCE,
    tolerance: float = TOLERANCE,
) -> SearchResult:
    """The walks as a ``SearchResult`` (best first), for ``decide`` and the hints. Cards of equal
    value (``search.equal_classes``) are one candidate, its highest card walked for all of them;
    a single candidate is played without walks. A card's cost is this seat's mean points over
    the walks through it, moon rule applied. ``confidence``: the walks' statistical settling
    (``settled_by_confidence``; 0, strong's ``CONFIDENCE``: every walk but those the exact
    settling saves)."""
    classes = equal_classes(k, legal)
    if len(classes) == 1:
        c = classes[0]
        return SearchResult([Option(c, c.bit_length() - 1, 0.0, 0.0, 0.0, False, 0)], -1, False)
    of_card = {c.bit_length() - 1: c for c in classes}
    walked = sum(1 << card for card in of_card)
    # Deals weighed by the queen's free dumps and by the suit lengths the pass leaves.
    doubt, prior = queen_doubt(k), length_prior(k)
    roots = walk_roots(
        k, walked, iterations, seed, stop, True, STRONG_POLICY, doubt, prior, confidence,
        CONFIDENCE_MIN_WALKS, tolerance,
    )  # fmt: skip
    roots.sort(key=_rank, reverse=True)
    options = [
        Option(of_card[r.card], r.card, -26.0 * r.reward / r.visits, 26.0 * r.reward / r.visits,
               r.moons / r.visits, False, r.visits)
        for r in roots
    ]  # fmt: skip
    return SearchResult(options, -1, options[0].moon_rate >= 0.5)


def doubted_deal(
    sampler: Sampler, rand: Callable[[], float], doubt: tuple[float, float, float, float] | None
) -> list[int]:
    """A deal from ``sampler`` kept with chance ``doubt[holder] / max(doubt)`` for the seat
    holding the queen of spades in it, else dealt again (``MAX_REDEALS`` times at most): deals
    weighed by ``worlds.queen_doubt``, exactly, by rejection."""
    hands = deal(sampler, rand)
    if doubt is not None:
        top = max(doubt)
        for _ in range(MAX_REDEALS):
            holder = next((s for s in range(4) if hands[s] & QUEEN_BIT), -1)
            if holder < 0 or rand() * top < doubt[holder]:
                break
            hands = deal(sampler, rand)
    return hands


def _weighed_pool(
    sampler: Sampler,
    me: int,
    prior: LengthPrior,
    doubt: tuple[float, float, float, float] | None,
    size: int,
    rng: _Rng,
    stop: Callable[[], bool] | None,
    batch: int,
) -> tuple[list[list[int]], list[float]]:
    """The walks' deals when they weigh them (``walk_roots``'s ``prior``): ``size`` deals (fewer
    if ``stop`` says so, asked every ``batch``) and the running sum of their weights, each the
    queen holder's doubt and the other seats' length weights, multiplied in the compiled
    walks' order."""
    top = max(doubt) if doubt is not None else 1.0
    pool: list[list[int]] = []
    cum: list[float] = []
    total = 0.0
    while len(pool) < size:
        if stop is not None and pool and len(pool) % batch == 0 and stop():
            break
        hands = deal(sampler, rng.random)
        w = 1.0
        for s in range(4):
            if s == me:
                continue
            if doubt is not None and hands[s] & QUEEN_BIT:
                w *= doubt[s] / top
            w = prior.scale(w, hands, s)
        total += w
        pool.append(hands)
        cum.append(total)
    return pool, cum


class _Node:
    __slots__ = ("avail", "children", "mean", "reward", "spread", "visits")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.reward = 0.0
        self.visits = 0
        self.avail = 0
        # kept at each credit, so that scoring a child takes no division (in C that counts)
        self.mean = 0.0
        self.spread = 0.0  # 1 / sqrt(visits)

    def credit(self, reward: float) -> None:
        self.visits += 1
        self.reward += reward
        self.mean = self.reward / self.visits
        self.spread = 1.0 / math.sqrt(self.visits)

    def score(self, explore: float) -> float:
        """UCB1 with availability counts: the child's mean plus its exploration term."""
        return self.mean + explore * math.sqrt(math.log(self.avail)) * self.spread


def _rollout_card(
    trick: list[int], legal: int, rng: _Rng, live: int = 0, policy: int = SPARRING
) -> int:
    """The playout's card (``rollout_card`` in ``_walks.c``); ``live``: the cards in hands."""
    if rng.random() < RANDOM_PLAY:
        cards = cards_of(legal)
        return cards[int(rng.random() * len(cards))]
    queen_out = policy != SPARRING and bool(live & QUEEN_BIT)
    if not trick and policy == SAFE_LEAD:
        fewest, lows = 99, list[int]()
        for s in range(4):
            m, theirs = legal & SUIT_MASKS[s], live & ~legal & SUIT_MASKS[s]
            if not m or not theirs or (queen_out and s == 2 and m & _LOW_SPADES == 0):
                continue
            low = (m & -m).bit_length() - 1
            below = (theirs & ((1 << low) - 1)).bit_count()
            if below < fewest:
                fewest, lows = below, []
            if below == fewest:
                lows.append(low)
        if lows:
            return lows[int(rng.random() * len(lows))]
    if not trick:
        suits = [
            s for s in range(4)
            if legal & SUIT_MASKS[s]
            and not (queen_out and s == 2 and legal & _LOW_SPADES == 0)
        ] or [s for s in range(4) if legal & SUIT_MASKS[s]]  # fmt: skip
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
            if policy != SPARRING and follow & ~QUEEN_BIT:
                return (follow & ~QUEEN_BIT).bit_length() - 1
            return follow.bit_length() - 1
        return (follow & -follow).bit_length() - 1
    if legal >> 36 & 1:
        return 36
    if queen_out and legal & _OVER_QUEEN:
        return (legal & _OVER_QUEEN).bit_length() - 1
    hearts = legal & HEARTS_MASK
    if hearts:
        return hearts.bit_length() - 1
    best, rank = -1, -1
    for s in range(4):
        m = legal & SUIT_MASKS[s]
        if m and (m.bit_length() - 1) - 13 * s > rank:
            best, rank = m.bit_length() - 1, (m.bit_length() - 1) - 13 * s
    return best


def settled_by_confidence(
    root: _Node, squares: dict[int, float], z: float, tolerance: float = 0.0
) -> bool:
    """Whether the root's card is settled by its walks' statistics: the most walked card (then
    the best summed reward, then the highest card: ``best_root``'s order) has the best mean
    reward and leads every other walked card by more than ``z`` standard errors of the
    difference of the two means, less ``tolerance`` (each card's own sample variance; every
    card walked twice at least). ``settled_by_confidence`` in ``_walks.c`` computes the same,
    in the same order."""
    if not root.children:
        return False
    lead = max(root.children, key=lambda c: (root.children[c].visits, root.children[c].reward, c))
    b = root.children[lead]
    if b.visits < 2:
        return False
    nb = float(b.visits)
    mb = b.reward / nb
    vb = max(0.0, (squares.get(lead, 0.0) - b.reward * mb) / (nb - 1.0))
    others = 0
    for c, ch in root.children.items():
        if c == lead:
            continue
        if ch.visits < 2:
            return False
        n = float(ch.visits)
        m = ch.reward / n
        v = max(0.0, (squares.get(c, 0.0) - ch.reward * m) / (n - 1.0))
        gap = mb - m + tolerance
        if gap <= 0.0 or gap * gap <= z * z * (vb / nb + v / n):
            return False
        others += 1
    return others > 0


def _walk_python(
    sampler: Sampler,
    start: Start,
    me: int,
    legal: int,
    iterations: int,
    seed: int,
    explore: float,
    random_play: float,
    moon: tuple[int, ...],
    stop: Callable[[], bool] | None,
    batch: int,
    settle: int,
    policy: int,
    doubt: tuple[float, float, float, float] | None,
    prior: tuple[tuple[int, int, int, int], tuple[float, ...]] | None = None,
    confidence: float = 0.0,
    min_walks: int = 0,
    tolerance: float = 0.0,
) -> tuple[list[tuple[int, int, float, int]], float]:
    """``_walks.walk`` in Python: the same walks, the same numbers, only slower."""
    assert random_play == RANDOM_PLAY
    taken0, trick0, leader0, turn0, broken0, first0, tricks_left0 = start
    rng = _Rng(seed)
    root = _Node()
    own_moons: dict[int, int] = {}
    squares: dict[int, float] = {}  # per root card: its walks' squared rewards, summed
    own_points = 0.0  # this seat's points summed over every walk, the moon rule applied
    pool: list[list[int]] = []
    cum: list[float] = []
    if prior is not None and iterations > 0:
        weights = LengthPrior(*prior)
        pool, cum = _weighed_pool(
            sampler, me, weights, doubt, min(POOL, iterations), rng, stop, batch
        )
    for it in range(iterations):
        if settle and it and it % settle == 0:
            visits = [*sorted((ch.visits for ch in root.children.values()), reverse=True), 0, 0]
            if visits[0] - visits[1] > iterations - it:
                break
            if (
                confidence > 0.0
                and it >= min_walks
                and settled_by_confidence(root, squares, confidence, tolerance)
            ):
                break
        if stop is not None and it and it % batch == 0 and stop():
            break
        if pool:
            at = bisect.bisect_right(cum, rng.random() * cum[-1])
            hands = list(pool[min(at, len(pool) - 1)])
        else:
            hands = doubted_deal(sampler, rng.random, doubt)
        taken = list(taken0)
        trick = list(trick0)
        leader, seat = leader0, turn0
        broken, first_trick, tricks_left = bool(broken0), bool(first0), tricks_left0
        node = root
        path: list[tuple[_Node, int]] = []
        expanding = True
        root_card = -1
        while seat >= 0:
            hand = hands[seat]
            moves = strict_moves(
                hand, SUIT_MASKS[trick[0] // 13] if trick else 0, first_trick, broken
            )
            if seat == me and node is root:
                moves &= legal
            if not expanding:
                if moves & (moves - 1):
                    live = hands[0] | hands[1] | hands[2] | hands[3] if policy != SPARRING else 0
                    card = _rollout_card(trick, moves, rng, live, policy)
                else:
                    card = moves.bit_length() - 1
            else:
                children = node.children
                untried = [c for c in cards_of(moves) if c not in children]
                if untried:
                    card = untried[int(rng.random() * len(untried))]
                    child = children[card] = _Node()
                    child.avail += 1
                    expanding = False
                else:
                    best_score = -math.inf
                    card = -1
                    for c in cards_of(moves):
                        ch = children[c]
                        ch.avail += 1
                        score = ch.score(explore)
                        if score > best_score:
                            best_score, card = score, c
                    child = children[card]
                if node is root:
                    root_card = card
                path.append((child, seat))
                node = child
            hands[seat] = hand ^ (1 << card)
            trick.append(card)
            if card >= 39:
                broken = True
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
        pts = [points_in(t) for t in taken]
        shooter = next((s for s in range(4) if pts[s] == 26), -1)
        if shooter >= 0:
            pts = list(moon[4 * shooter : 4 * shooter + 4])
            if shooter == me and root_card >= 0:
                own_moons[root_card] = own_moons.get(root_card, 0) + 1
        own_points += pts[me]
        if path:
            r = pts[path[0][1]] / 26.0
            squares[root_card] = squares.get(root_card, 0.0) + r * r
        for n, mover in path:
            n.credit(-pts[mover] / 26.0)
    rows = [
        (c, root.children[c].visits, root.children[c].reward, own_moons.get(c, 0))
        for c in sorted(root.children)
    ]
    return rows, own_points
