"""Determinized Monte-Carlo search: sample the hidden cards, play each deal out, compare means.

For a play: sample deals consistent with what the seat knows, group the legal cards into classes
of equal value (touching cards of one suit with nothing between them held by anyone else are the
same card in effect), and for every class play its card in each deal and the rest of the hand
with the fast policy. All classes see the same deals, so their means differ by the card, not by
the luck of the draw. Deals are added a batch at a time and a class that is clearly worse than
the leader on the deals so far is dropped (a race), so the budget goes to the close calls. The
class with the best mean utility wins.

The moon, both ways. If one other seat has taken every point so far and its cards are strong
enough to make the moon in a fair share of deals when nobody blocks it, the playouts treat it as
running and everyone else blocks it, so taking a heart from it now is valued at what it saves.
If nobody else has points, the seat also tries each class with the rest played for the moon, and
keeps that line when it makes the moon in most deals and is worth more; once the seat has taken
a lot of points, all of them, it needs fewer deals to keep going (it has committed).

For a pass: candidate passes are the three-card sets among the cards the rule-based bot most
wants to pass, plus passes that empty a short suit. Each is tried on the same sampled deals (the
other seats pass as the basic bot would) and the whole hand played out, in the same race.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations

from server.core.rules import SUIT_MASKS, Hand, PassDirection, points_in

from .basic import basic_pass, pass_scores
from .endgame import Solver, moon_table
from .knowledge import Knowledge
from .levels import BotLevel
from .outcome import scored, utility
from .playout import play_out
from .worlds import NoWorld, plausible_worlds, sample_world

PROBE_WORLDS = 16
BATCH = 8  # deals added to every live candidate between cuts
FIRST_CUT = 16  # no card is dropped before this many deals ...
PASS_FIRST_CUT = 8  # ... and no pass before this many (there are many more of them)
Z = 2.0  # standard errors of the paired difference before a candidate is dropped
MIN_GAP = 0.05
THREAT_RATE = 0.25  # an opponent running with this chance unblocked is blocked in the search
OWN_PROBE_RATE = 0.3  # below this, shooting is not even tried
SHOOT_RATE = 0.5  # the moon line is taken only when it makes the moon in most deals ...
COMMITTED_RATE = 0.3  # ... or in this many once the seat holds this many points, all of them
# ... and against players the policy does not explain (no sampled deal fits their play), in
# three deals of four (half once committed): the playouts' blockers are the policy, and real
# ones that play otherwise block better (docs/bots.md).
WARY_SHOOT_RATE = 0.75
WARY_COMMITTED_RATE = 0.5
COMMITTED_POINTS = 14
SHOOT_SLACK = 0.15  # a moon line stays in the race while this close to the share it needs


@dataclass(slots=True)
class Option:
    """One candidate: a class of equal cards to play, or three cards to pass."""

    cards: int  # play: the class of equal cards; pass: the three cards
    card: int  # play: the card played for the class; pass: -1
    cost: float  # mean points this seat takes this hand (moon rule applied)
    value: float  # mean utility (points, and the game near the target); higher is better
    moon_rate: float  # share of the deals in which this seat shot the moon
    shoot: bool  # valued by playing on for the moon
    worlds: int  # deals it was tried on (fewer if the race dropped it early)


@dataclass(slots=True)
class SearchResult:
    options: list[Option]  # best first
    runner: int  # another seat the search treated as running for the moon, or -1
    shooting: bool  # the best option plays for the moon


@dataclass(slots=True)
class _Arm:
    cards: int
    card: int
    shoot: bool
    values: list[float] = field(default_factory=list)
    cost: float = 0.0
    moons: int = 0
    alive: bool = True

    def option(self) -> Option:
        n = max(1, len(self.values))
        return Option(
            self.cards, self.card, self.cost / n, sum(self.values) / n, self.moons / n,
            self.shoot, len(self.values),
        )  # fmt: skip


def _race(
    arms: list[_Arm],
    world: Callable[[int], object],
    trial: Callable[[_Arm, object], tuple[float, float, bool]],
    max_worlds: int,
    min_worlds: int,
    budget: int,
    unit: int,
    keep: Callable[[_Arm], bool] | None = None,
    first_cut: int = 16,
    stop: Callable[[], bool] | None = None,
) -> None:
    """Try every live arm on the same deals, a batch at a time, dropping an arm once it is
    clearly worse than the leader on the deals both have seen (paired difference more than
    ``Z`` standard errors). Stops at ``max_worlds`` deals, when ``budget`` (in ``unit`` per
    trial) is spent, or when one arm is left after ``min_worlds``. ``keep`` may drop an arm for
    a reason of its own (a moon line that is not making the moon). ``stop`` (the caller's
    clock, asked between batches once every arm has a batch) ends the race early with the
    best so far: the bounded search for a loaded machine."""
    spent = 0
    n = 0
    while n < max_worlds:
        live = [a for a in arms if a.alive]
        if len(live) == 1 and n >= min_worlds:
            return
        if n >= min_worlds and spent >= budget:
            return
        if n and stop is not None and stop():
            return
        for _ in range(min(BATCH, max_worlds - n)):
            w = world(n)
            for a in live:
                cost, value, moon = trial(a, w)
                a.values.append(value)
                a.cost += cost
                a.moons += moon
                spent += unit
            n += 1
        if n < first_cut or len(live) < 2:
            continue
        if keep is not None:
            for a in live:
                if not keep(a):
                    a.alive = False
            live = [a for a in live if a.alive] or live
        best = max(live, key=lambda a: sum(a.values))
        bv = best.values
        for a in live:
            if a is best:
                continue
            diffs = [x - y for x, y in zip(bv, a.values, strict=True)]
            mean = sum(diffs) / n
            var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
            if mean > Z * math.sqrt(var / n) + MIN_GAP:
                a.alive = False


def equal_classes(k: Knowledge, legal: int) -> list[int]:
    """Legal cards grouped by equal value: touching in one suit once our own cards and those
    played to earlier tricks are left out (a card on the table still separates them), and worth
    the same points (the queen of spades stands alone)."""
    held_elsewhere = k.unseen
    for c in k.trick:
        held_elsewhere |= 1 << c
    classes: list[int] = []
    for suit in range(4):
        m = legal & SUIT_MASKS[suit]
        current = 0
        prev = -1
        while m:
            bit = m & -m
            m ^= bit
            c = bit.bit_length() - 1
            between = held_elsewhere & (bit - (1 << (prev + 1))) if prev >= 0 else 1
            if current and not between and c != 36 and prev != 36:
                current |= bit
            else:
                if current:
                    classes.append(current)
                current = bit
            prev = c
        if current:
            classes.append(current)
    return classes


def _trial_play(
    k: Knowledge,
    base: Hand,
    card: int,
    shooter: int,
    noise: float,
    rand: Callable[[], float] | None,
) -> tuple[float, float, bool]:
    me, scores, rules = k.seat, k.scores, k.rules
    taken, _ = play_out(base, shooter, True, me, noise, rand, card)
    pts = [points_in(t) for t in taken]
    final = scored(pts, scores, rules)
    return final[me], utility(me, scores, rules, final), pts[me] == 26


def _moon_rate(bases: list[Hand], shooter: int, block: bool) -> float:
    made = 0
    for base in bases:
        taken, _ = play_out(base, shooter, block)
        if points_in(taken[shooter]) == 26:
            made += 1
    return made / len(bases)


def search_play(
    k: Knowledge,
    legal: int,
    level: BotLevel,
    rng: random.Random,
    stop: Callable[[], bool] | None = None,
) -> SearchResult:
    classes = equal_classes(k, legal)
    if len(classes) == 1:
        c = classes[0]
        card = c.bit_length() - 1
        return SearchResult([Option(c, card, 0.0, 0.0, 0.0, False, 0)], -1, False)
    me = k.seat
    remaining = max(1, sum(k.counts))
    relaxed = False
    try:
        sample_world(k, random.Random(0))
    except NoWorld:
        relaxed = True  # a revoke faked a fact: trust only what cannot be faked
    bases: list[Hand] = []
    fits: list[bool] = []  # per batch of deals: did any candidate deal explain the others' play
    seeds: dict[int, int] = {}  # a deal's own seed for the others' random plays (id of the deal)

    # Weigh deals by how well they explain the others' plays, once there are plays to explain.
    pool = level.inference_pool if k.played & ~k.played_by[me] else 1

    def world(i: int) -> Hand:
        while len(bases) <= i:
            for w in plausible_worlds(
                k, rng, BATCH, relaxed=relaxed, pool=pool, surprise=level.surprise, fit=fits
            ):
                base = Hand.from_position(w, k.tricks, k.trick)
                seeds[id(base)] = rng.getrandbits(32)
                bases.append(base)
        return bases[i]

    probe = [world(i) for i in range(PROBE_WORLDS)]
    runner = -1
    leader = k.moon_runner()
    pts = k.points_taken()
    if leader >= 0 and leader != me and _moon_rate(probe, leader, False) >= THREAT_RATE:
        runner = leader
    own_moon = leader in (-1, me) and _moon_rate(probe, me, True) >= OWN_PROBE_RATE
    wary = bool(fits) and not fits[0]  # the others do not play like the policy
    committed = leader == me and pts[me] >= COMMITTED_POINTS
    if wary:
        need = WARY_COMMITTED_RATE if committed else WARY_SHOOT_RATE
    else:
        need = COMMITTED_RATE if committed else SHOOT_RATE

    if level.endgame and k.counts[me] <= level.endgame and wary:
        # The exact endgame only against players the policy does not explain: against those it
        # explains, its playouts are the better model of them.
        return _search_endgame(k, classes, level, world, runner, stop)

    arms = [_Arm(c, c.bit_length() - 1, False) for c in classes]
    if own_moon:
        arms += [_Arm(c, c.bit_length() - 1, True) for c in classes]

    def trial(a: _Arm, base: object) -> tuple[float, float, bool]:
        # Every candidate meets the same random plays in a deal: the comparison stays paired.
        rand = random.Random(seeds[id(base)]).random if level.noise else None
        shooter = me if a.shoot else runner
        return _trial_play(k, base, a.card, shooter, level.noise, rand)  # type: ignore[arg-type]

    def keep(a: _Arm) -> bool:
        return not a.shoot or a.moons / len(a.values) >= need - SHOOT_SLACK

    _race(
        arms, world, trial, level.max_worlds, level.min_worlds, level.play_budget, remaining, keep,
        FIRST_CUT, stop,
    )  # fmt: skip
    options = [a.option() for a in arms]
    # A moon line counts only if it makes the moon in most deals (fewer once committed).
    eligible = [o for o in options if not o.shoot or o.moon_rate >= need]
    eligible.sort(key=lambda o: (-o.worlds, -o.value))
    best_by_class: dict[int, Option] = {}
    for o in eligible:
        if o.cards not in best_by_class or _better(o, best_by_class[o.cards]):
            best_by_class[o.cards] = o
    ranked = sorted(best_by_class.values(), key=lambda o: (-o.worlds, -o.value))
    return SearchResult(ranked, runner, ranked[0].shoot)


def _search_endgame(
    k: Knowledge,
    classes: list[int],
    level: BotLevel,
    world: Callable[[int], Hand],
    runner: int,
    stop: Callable[[], bool] | None,
) -> SearchResult:
    """The end of the hand: every candidate in each sampled deal valued by exact play of the
    rest (``endgame.Solver``: each seat, every hand known, takes the fewest points it can),
    one solver per deal for all the candidates. No moon line of its own: the exact play makes
    the moon where it can be made and blocks it where it can be blocked."""
    me, scores, rules = k.seat, k.scores, k.rules
    moons = moon_table(scores, rules)
    solvers: dict[int, Solver] = {}

    def trial(a: _Arm, w: object) -> tuple[float, float, bool]:
        base: Hand = w  # type: ignore[assignment]
        solver = solvers.get(id(base))
        if solver is None:
            solver = solvers[id(base)] = Solver(moons)
        rest = solver.rest(
            base.hands, base.trick, base.leader, base.hearts_broken, base.taken, a.card
        )
        pts = [points_in(base.taken[s]) + rest[s] for s in range(4)]
        final = scored(pts, scores, rules)
        return final[me], utility(me, scores, rules, final), pts[me] == 26

    arms = [_Arm(c, c.bit_length() - 1, False) for c in classes]
    worlds = min(level.endgame_worlds, level.max_worlds)
    _race(
        arms, world, trial, worlds, min(level.min_worlds, worlds), 1 << 30, 1, None, FIRST_CUT, stop
    )
    options = sorted((a.option() for a in arms), key=lambda o: (-o.worlds, -o.value))
    return SearchResult(options, runner, options[0].moon_rate >= SHOOT_RATE)


def _better(a: Option, b: Option) -> bool:
    return (a.worlds, a.value) > (b.worlds, b.value)


def pass_candidates(hand: int) -> list[int]:
    """Three-card sets worth trying: the basic pass first, then sets from the worst cards."""
    scores = pass_scores(hand)
    ranked = sorted(scores, key=lambda c: (-scores[c], -c))
    first = basic_pass(hand)
    found = [first]
    seen = {first}
    for combo in combinations(ranked[:5], 3):
        m = (1 << combo[0]) | (1 << combo[1]) | (1 << combo[2])
        if m not in seen:
            seen.add(m)
            found.append(m)
    for suit in (0, 1):
        short = hand & SUIT_MASKS[suit]
        if 0 < short.bit_count() <= 3:
            m = short
            for c in ranked:
                if m.bit_count() == 3:
                    break
                m |= 1 << c
            if m not in seen:
                seen.add(m)
                found.append(m)
    return found


_PassDeal = tuple[list[int], list[int], int]  # the hands, the others' passes, a seed


def _trial_pass(
    k: Knowledge, deal: _PassDeal, cards: int, noise: float
) -> tuple[float, float, bool]:
    me, scores, rules = k.seat, k.scores, k.rules
    hands, passes, seed = deal
    h = Hand.deal(hands, PassDirection(k.direction))
    for s in range(4):
        h.choose_pass(s, cards if s == me else passes[s])
    # The same opponent model as for a play: the others' random plays hedge against a field
    # that does not play the policy (the same plays for every candidate pass in a deal).
    rand = random.Random(seed).random if noise else None
    taken, _ = play_out(h, -1, True, me, noise, rand)
    pts = [points_in(t) for t in taken]
    final = scored(pts, scores, rules)
    return final[me], utility(me, scores, rules, final), pts[me] == 26


def search_pass(
    k: Knowledge, level: BotLevel, rng: random.Random, stop: Callable[[], bool] | None = None
) -> SearchResult:
    deals: list[_PassDeal] = []

    def world(i: int) -> _PassDeal:
        while len(deals) <= i:
            w = sample_world(k, rng)
            passes = [0 if s == k.seat else basic_pass(w[s]) for s in range(4)]
            deals.append((w, passes, rng.getrandbits(32) if level.noise else 0))
        return deals[i]

    arms = [_Arm(cards, -1, False) for cards in pass_candidates(k.hand)]

    def trial(a: _Arm, deal: object) -> tuple[float, float, bool]:
        return _trial_pass(k, deal, a.cards, level.noise)  # type: ignore[arg-type]

    _race(
        arms, world, trial, level.pass_worlds, level.pass_worlds // 4, level.pass_budget, 52,
        None, PASS_FIRST_CUT, stop,
    )  # fmt: skip
    options = sorted((a.option() for a in arms), key=lambda o: (-o.worlds, -o.value))
    return SearchResult(options, -1, False)
