"""The quick-play queue's matching decision: a pure function of the queue and the time.

No I/O and no clock: the matchmaker loop reads the queue and the shared clock, calls
`find_tables(entries, now, cfg)` and seats what it returns (atomically, under its lease).

Definitions (also in docs/ratings.md, "Quick-play matching"):

- waited(e)  = max(0, now - e.joined_at)
- window(e)  = min(max_window, initial_window + widen_step * floor(waited / widen_every)),
  by default ±100 widening by 50 every 5 s up to ±600. Player e accepts any display rating in
  [e.display - window(e), e.display + window(e)].
- a and b are *compatible* ("their windows overlap") when each accepts the other:
  |a.display - b.display| <= min(window(a), window(b)).
- a group (a table's humans) is valid when every pair in it is compatible and all share one
  target. With lo/hi the group's lowest/highest rating that is: for every member m,
  max(m.display - lo, hi - m.display) <= window(m).

Policy: full tables of four first, tightest spread (hi - lo) first, ties to the group whose
members joined earliest, then player ids; then every player who has waited >= bot_fill_after and
is still unseated gets a table with as many compatible waiting players as possible (largest
group, then tightest) and bots in the empty seats, each bot seat carrying the mean display
rating of that table's humans. Deterministic: no randomness, the input order does not matter.

Complexity, per target with n waiting players: one O(n log n) sort; each anchor's best group is
searched among its K nearest compatible players (K = cfg.candidates, default 8, found by walking
outward in rating order, at most S = cfg.scan_limit steps a side) over O(K^2) rating ranges; a
lazy heap orders the candidate groups. Total O(n log n + n * (S + K^2)) plus a recomputation per
group invalidated by an earlier seating, never all 4-combinations (docs/ratings.md gives its
time for 5,000 waiting players).
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Target = Literal[50, 100]
TARGETS: tuple[int, ...] = (50, 100)


@dataclass(frozen=True, slots=True)
class MatchConfig:
    initial_window: int = 100
    widen_step: int = 50
    widen_every: float = 5.0
    max_window: int = 600
    bot_fill_after: float = 20.0
    table_size: int = 4
    # How many nearest compatible players an anchor's group is chosen from, and how far the
    # outward walk may go per side: they bound the work per player (see the module docstring).
    candidates: int = 8
    scan_limit: int = 256

    def __post_init__(self) -> None:
        if self.initial_window < 0 or self.widen_step < 0 or self.max_window < 0:
            raise ValueError("windows must be non-negative")
        if self.widen_every <= 0:
            raise ValueError("widen_every must be positive")
        if self.table_size < 1 or self.candidates < self.table_size - 1 or self.scan_limit < 1:
            raise ValueError("table_size, candidates or scan_limit out of range")


DEFAULT_CONFIG = MatchConfig()


@dataclass(frozen=True, slots=True)
class QueueEntry:
    player_id: str
    display: int  # the player's display rating
    target: Target
    joined_at: float  # seconds, on the clock the nodes share

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"quick play target must be 50 or 100, not {self.target!r}")
        if not math.isfinite(self.joined_at):
            raise ValueError("joined_at must be finite")


@dataclass(frozen=True, slots=True)
class QueueStatus:
    """What a waiting player is told: how long they have waited and how wide the search is."""

    player_id: str
    target: Target
    waited: float
    window: int
    low: int  # lowest display rating currently accepted
    high: int
    bots_in: float  # seconds until the empty seats may go to bots (0: now)


@dataclass(frozen=True, slots=True)
class Table:
    """One table to open now: its humans, and a display rating for each empty (bot) seat."""

    target: Target
    players: tuple[QueueEntry, ...]
    bot_ratings: tuple[int, ...]

    @property
    def player_ids(self) -> tuple[str, ...]:
        return tuple(p.player_id for p in self.players)

    @property
    def spread(self) -> int:
        ratings = [p.display for p in self.players]
        return max(ratings) - min(ratings)


@dataclass(frozen=True, slots=True)
class Decision:
    tables: tuple[Table, ...]

    @property
    def seated(self) -> frozenset[str]:
        return frozenset(pid for t in self.tables for pid in t.player_ids)


def waited(entry: QueueEntry, now: float) -> float:
    # A joined_at slightly in the future (clock skew between nodes) counts as no wait.
    return max(0.0, now - entry.joined_at)


def window(entry: QueueEntry, now: float, cfg: MatchConfig = DEFAULT_CONFIG) -> int:
    steps = math.floor(waited(entry, now) / cfg.widen_every)
    return min(cfg.max_window, cfg.initial_window + cfg.widen_step * steps)


def compatible(a: QueueEntry, b: QueueEntry, now: float, cfg: MatchConfig = DEFAULT_CONFIG) -> bool:
    """Each accepts the other's rating (and they want the same target)."""
    return a.target == b.target and abs(a.display - b.display) <= min(
        window(a, now, cfg), window(b, now, cfg)
    )


def group_ok(group: Sequence[QueueEntry], now: float, cfg: MatchConfig = DEFAULT_CONFIG) -> bool:
    return all(compatible(a, b, now, cfg) for a, b in itertools.combinations(group, 2))


def queue_status(entry: QueueEntry, now: float, cfg: MatchConfig = DEFAULT_CONFIG) -> QueueStatus:
    w = window(entry, now, cfg)
    t = waited(entry, now)
    return QueueStatus(
        player_id=entry.player_id,
        target=entry.target,
        waited=t,
        window=w,
        low=entry.display - w,
        high=entry.display + w,
        bots_in=max(0.0, cfg.bot_fill_after - t),
    )


def bot_rating(players: Sequence[QueueEntry]) -> int:
    """The rating a bot filling a seat should have: the table's mean human display rating."""
    return round(sum(p.display for p in players) / len(players))


def _dedupe(entries: Iterable[QueueEntry]) -> list[QueueEntry]:
    # The store should never hold a player twice; if it does, keep one entry deterministically
    # (earliest join) so nobody can be seated twice.
    best: dict[str, QueueEntry] = {}
    for e in entries:
        kept = best.get(e.player_id)
        if kept is None or (e.joined_at, e.target, e.display) < (
            kept.joined_at,
            kept.target,
            kept.display,
        ):
            best[e.player_id] = e
    return list(best.values())


# A candidate group's priority: (spread, members' (joined_at, player_id) sorted), smaller first.
_Key = tuple[int, tuple[tuple[float, str], ...]]


class _Bucket:
    """The waiting players of one target, sorted by rating, with a linked list of the unseated."""

    def __init__(self, entries: list[QueueEntry], now: float, cfg: MatchConfig) -> None:
        self.cfg = cfg
        self.e = sorted(entries, key=lambda x: (x.display, x.joined_at, x.player_id))
        n = len(self.e)
        self.d = [x.display for x in self.e]
        self.w = [window(x, now, cfg) for x in self.e]
        self.tie = [(x.joined_at, x.player_id) for x in self.e]
        self.prev = list(range(-1, n - 1))
        self.next = list(range(1, n + 1))  # n means "none"
        self.seated = [False] * n

    def seat(self, members: Iterable[int]) -> None:
        for i in members:
            self.seated[i] = True
            p, q = self.prev[i], self.next[i]
            if p >= 0:
                self.next[p] = q
            if q < len(self.e):
                self.prev[q] = p

    def neighbours(self, i: int) -> list[int]:
        """Up to K nearest unseated players compatible with i, nearest first."""
        d, w, n, cfg = self.d, self.w, len(self.e), self.cfg
        out: list[int] = []
        lo, hi = self.prev[i], self.next[i]
        lo_steps = hi_steps = 0
        while len(out) < cfg.candidates:
            # A side ends once past i's own window (all further are farther) or the scan limit.
            lo_ok = lo >= 0 and d[i] - d[lo] <= w[i] and lo_steps < cfg.scan_limit
            hi_ok = hi < n and d[hi] - d[i] <= w[i] and hi_steps < cfg.scan_limit
            if not (lo_ok or hi_ok):
                break
            take_lo = lo_ok and (
                not hi_ok or (d[i] - d[lo], self.tie[lo]) < (d[hi] - d[i], self.tie[hi])
            )
            if take_lo:
                j, lo, lo_steps = lo, self.prev[lo], lo_steps + 1
            else:
                j, hi, hi_steps = hi, self.next[hi], hi_steps + 1
            if abs(d[i] - d[j]) <= w[j]:
                out.append(j)
        return out

    def fits(self, m: int, lo: int, hi: int) -> bool:
        """Player m accepts everyone rated in [lo, hi] (m itself being in that range)."""
        return max(self.d[m] - lo, hi - self.d[m]) <= self.w[m]

    def best_group(self, i: int, size: int) -> tuple[_Key, tuple[int, ...]] | None:
        """The best valid group of `size` unseated players containing i, by _Key.

        Among i and its nearest candidates, any group spans some rating range [lo, hi] and a
        member fits iff max(d - lo, hi - d) <= its window, which depends only on (lo, hi). So
        for each candidate range, narrowest first, the best group in it is i plus the earliest
        joiners that fit; it is valid (a narrower actual range only loosens the test) and no
        other group in that range beats it. Ranges are over distinct ratings, so a crowd of
        new players all at 1500 costs one range, not C(K, 3) subsets.
        """
        if size == 1:
            return (0, (self.tie[i],)), (i,)
        d, tie = self.d, self.tie
        others = sorted(self.neighbours(i), key=lambda m: tie[m])
        values = sorted({d[i], *(d[m] for m in others)})
        ranges = sorted(
            (hv - lv, lv, hv) for lv in values if lv <= d[i] for hv in values if hv >= d[i]
        )
        best: tuple[_Key, tuple[int, ...]] | None = None
        for nominal, lv, hv in ranges:
            if best is not None and nominal > best[0][0]:
                break  # every group spanning this range is wider than the best found
            if not self.fits(i, lv, hv):
                continue
            chosen = [m for m in others if lv <= d[m] <= hv and self.fits(m, lv, hv)]
            chosen = chosen[: size - 1]
            if len(chosen) < size - 1:
                continue
            members = tuple(sorted((i, *chosen), key=lambda m: tie[m]))
            spread = max(d[m] for m in members) - min(d[m] for m in members)
            key: _Key = (spread, tuple(tie[m] for m in members))
            if best is None or key < best[0]:
                best = (key, members)
        return best

    def table(self, members: tuple[int, ...], target: Target) -> Table:
        players = tuple(self.e[m] for m in members)
        bots = self.cfg.table_size - len(players)
        return Table(target, players, (bot_rating(players),) * bots)


def _match_target(
    entries: list[QueueEntry], target: Target, now: float, cfg: MatchConfig
) -> list[Table]:
    b = _Bucket(entries, now, cfg)
    n, size = len(b.e), cfg.table_size
    tables: list[Table] = []

    # Full tables: a lazy best-first heap of each anchor's best group. A popped group whose
    # members are all still free is seated (it is the best left, as far as each anchor's
    # K-nearest search sees); otherwise its anchor recomputes among the players still free.
    heap: list[tuple[_Key, int, tuple[int, ...]]] = []
    for i in range(n):
        found = b.best_group(i, size)
        if found is not None:
            heap.append((found[0], i, found[1]))
    heapq.heapify(heap)
    while heap:
        _key, i, members = heapq.heappop(heap)
        if b.seated[i]:
            continue
        if any(b.seated[m] for m in members):
            found = b.best_group(i, size)
            if found is not None:
                heapq.heappush(heap, (found[0], i, found[1]))
            continue
        b.seat(members)
        tables.append(b.table(members, target))

    # Bot fill: longest waiters first, each with as many compatible humans as still possible.
    overdue = sorted(
        (i for i in range(n) if not b.seated[i] and waited(b.e[i], now) >= cfg.bot_fill_after),
        key=lambda i: b.tie[i],
    )
    for i in overdue:
        if b.seated[i]:
            continue
        for k in range(size, 0, -1):
            found = b.best_group(i, k)
            if found is not None:
                b.seat(found[1])
                tables.append(b.table(found[1], target))
                break
    return tables


def find_tables(
    entries: Iterable[QueueEntry], now: float, cfg: MatchConfig = DEFAULT_CONFIG
) -> Decision:
    """The tables to seat now. Nobody is in two tables; targets never mix."""
    by_target: dict[Target, list[QueueEntry]] = {}
    for e in _dedupe(entries):
        by_target.setdefault(e.target, []).append(e)
    tables: list[Table] = []
    for target in sorted(by_target):
        tables.extend(_match_target(by_target[target], target, now, cfg))
    return Decision(tuple(tables))
