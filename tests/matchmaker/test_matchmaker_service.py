"""The matchmaker service: passes, the lease, abandoning, and never seating anyone twice.

Matching decisions use an explicit ``now`` (no sleeping); only the lease's expiry is real time.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from matchmaker.__main__ import build, serve
from matchmaker.matching import MatchConfig, QueueEntry, Table
from matchmaker.rooms_bridge import RoomsBridge
from matchmaker.service import LEASE_NAME, Matchmaker, SeatedTable
from server.core.ratings import display_rating
from server.core.ratings.anchors import anchor_rating
from server.core.room.bot_names import BOT_NAMES
from server.core.room.state import RoomState
from server.play.bot_pool import BotPool
from server.play.rooms import RoomService
from server.store import MemoryRoomStore
from server.store.league import LeagueStore
from server.store.memory.league import MemoryLeagueStore
from server.store.redis.league import RedisLeagueStore
from server.store.redis.rooms import RedisRoomStore
from tests.conftest import TEST_PREFIX


def entry(pid: str, display: int = 1500, joined: float = 0.0, target: int = 50) -> QueueEntry:
    return QueueEntry(pid, display, target, joined)  # type: ignore[arg-type]


@dataclass
class Rooms:
    """A stand-in room service: records what the matchmaker asks of it."""

    prefix: str = "room"
    created: dict[str, Table] = field(default_factory=dict)
    names: dict[str, dict[str, str]] = field(default_factory=dict)
    abandoned: list[str] = field(default_factory=list)
    fail: bool = False
    delay: float = 0.0
    counter: itertools.count[int] = field(default_factory=itertools.count)

    async def create(self, table: Table, names: Mapping[str, str]) -> str:
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("room service down")
        room = f"{self.prefix}-{next(self.counter)}"
        self.created[room] = table
        self.names[room] = dict(names)
        return room

    async def abandon(self, room: str) -> None:
        self.abandoned.append(room)


class AlwaysLease:
    """A lease everyone holds at once: split brain, to show seating is safe without the lease."""

    async def acquire_lease(self, name: str, holder: str, ttl: float) -> bool:
        return True

    async def release_lease(self, name: str, holder: str) -> bool:
        return True


def matchmaker(
    league: LeagueStore, rooms: Rooms, leases: object | None = None, **options: object
) -> Matchmaker:
    return Matchmaker(
        league,
        leases or MemoryRoomStore(),  # type: ignore[arg-type]
        rooms.create,
        MatchConfig(),
        options.pop("node_id", "node-a"),  # type: ignore[arg-type]
        abandon_table=rooms.abandon,
        **options,  # type: ignore[arg-type]
    )


async def queue(league: LeagueStore, *entries: QueueEntry) -> None:
    for e in entries:
        assert await league.enqueue(e, f"Name {e.player_id}")


def seated_ids(seated: list[SeatedTable]) -> list[set[str]]:
    return [set(s.table.player_ids) for s in seated]


# Matching through the service --------------------------------------------------------------------


async def test_players_close_in_rating_are_seated_together_before_far_ones() -> None:
    league, rooms = MemoryLeagueStore(), Rooms()
    mm = matchmaker(league, rooms)
    # Five players all within ±100 of each other's rating: the tightest four go first.
    await queue(
        league,
        entry("far", 1590),
        entry("a", 1500),
        entry("b", 1510),
        entry("c", 1520),
        entry("d", 1530),
        entry("x", 1900),
        entry("y", 1905),
        entry("z", 1910),
        entry("w", 1915),
    )
    seated = await mm.step(now=0.0)
    assert sorted(map(sorted, seated_ids(seated))) == [["a", "b", "c", "d"], ["w", "x", "y", "z"]]
    assert [e.player_id for e in await league.queue_entries()] == ["far"]
    for s in seated:
        assert rooms.created[s.room_id] == s.table
        assert rooms.names[s.room_id] == {p: f"Name {p}" for p in s.table.player_ids}
        for pid in s.table.player_ids:
            assert await league.take_assignment(pid) == s.room_id
    assert rooms.abandoned == []


async def test_the_window_widens_with_waiting() -> None:
    league, rooms = MemoryLeagueStore(), Rooms()
    mm = matchmaker(league, rooms)
    await queue(
        league, *(entry(p, d) for p, d in zip("abcd", (1500, 1560, 1620, 1680), strict=True))
    )
    assert await mm.step(now=0.0) == []  # spread 180 > ±100
    assert await mm.step(now=9.9) == []  # ±150
    seated = await mm.step(now=15.0)  # ±250
    assert seated_ids(seated) == [set("abcd")]
    assert seated[0].table.bot_ratings == ()


async def test_bots_fill_the_empty_seats_after_the_wait() -> None:
    league, rooms = MemoryLeagueStore(), Rooms()
    mm = matchmaker(league, rooms)
    await queue(league, entry("a", 1500, joined=0.0), entry("b", 1540, joined=3.0))
    assert await mm.step(now=19.9) == []
    seated = await mm.step(now=20.0)
    assert seated_ids(seated) == [{"a", "b"}]
    assert seated[0].table.bot_ratings == (1520, 1520)
    assert await league.queue_entries() == []


async def test_leaving_the_queue_takes_a_player_out_of_matching() -> None:
    league, rooms = MemoryLeagueStore(), Rooms()
    mm = matchmaker(league, rooms)
    await queue(league, *(entry(p) for p in "abcd"))
    assert await league.dequeue("c")
    assert await mm.step(now=1.0) == []  # three left: not a table until the bot fill
    seated = await mm.step(now=25.0)
    assert seated_ids(seated) == [{"a", "b", "d"}]
    assert await league.take_assignment("c") is None


async def test_a_table_that_loses_a_player_before_seating_is_abandoned() -> None:
    league, rooms = MemoryLeagueStore(), Rooms()

    async def create_then_leave(table: Table, names: Mapping[str, str]) -> str:
        room = await rooms.create(table, names)
        await league.dequeue("b")  # b leaves while the room is being made
        return room

    mm = Matchmaker(
        league, MemoryRoomStore(), create_then_leave, node_id="n", abandon_table=rooms.abandon
    )
    await queue(league, *(entry(p) for p in "abcd"))
    assert await mm.step(now=1.0) == []
    assert rooms.abandoned == list(rooms.created)  # the one room made, and nobody told of it
    assert {e.player_id for e in await league.queue_entries()} == {"a", "c", "d"}
    assert await league.take_assignments("abcd") == {}
    assert await league.take_stale_tables(1e12) == []  # the journal is clean


async def test_a_failed_room_creation_leaves_everyone_queued() -> None:
    league, rooms = MemoryLeagueStore(), Rooms(fail=True)
    mm = matchmaker(league, rooms)
    await queue(league, *(entry(p) for p in "abcd"))
    assert await mm.step(now=1.0) == []
    assert len(await league.queue_entries()) == 4
    rooms.fail = False
    assert seated_ids(await mm.step(now=2.0)) == [set("abcd")]


async def test_rooms_left_by_a_dead_matchmaker_are_abandoned() -> None:
    league, rooms = MemoryLeagueStore(), Rooms()
    await league.note_table("orphan", 10.0)  # created, never seated: its matchmaker died
    await league.note_table("young", 95.0)  # another matchmaker's, still in flight
    mm = matchmaker(league, rooms, stale_after=60.0)
    await mm.step(now=100.0)
    assert rooms.abandoned == ["orphan"]
    assert await league.take_stale_tables(99.0) == ["young"]


async def test_queue_entries_nobody_vouches_for_are_purged() -> None:
    league, rooms = MemoryLeagueStore(), Rooms()
    mm = matchmaker(league, rooms, queue_ttl=30.0)
    await queue(league, *(entry(p) for p in "abcdef"))  # seen at 0
    assert await league.touch_queue(["a", "b", "c", "d"], 25.0) == 4
    seated = await mm.step(now=40.0)  # e and f's node died: never seat them
    assert seated_ids(seated) == [set("abcd")]
    assert await league.queue_entries() == []


async def test_a_pass_without_the_lease_does_nothing() -> None:
    league, rooms = MemoryLeagueStore(), Rooms()
    leases = MemoryRoomStore()
    assert await leases.acquire_lease(LEASE_NAME, "someone-else", 30.0)
    mm = matchmaker(league, rooms, leases)
    await queue(league, *(entry(p) for p in "abcd"))
    assert await mm.step(now=1.0) == []
    assert not mm.leader and rooms.created == {}
    assert len(await league.queue_entries()) == 4


async def test_run_passes_until_stopped_and_releases_the_lease() -> None:
    league, rooms = MemoryLeagueStore(), Rooms()
    leases = MemoryRoomStore()
    mm = matchmaker(league, rooms, leases, interval=0.01, lease_ttl=5.0)
    await queue(league, *(entry(p, joined=1e12) for p in "abcd"))
    task = asyncio.create_task(mm.run())
    for _ in range(300):
        if rooms.created:
            break
        await asyncio.sleep(0.01)
    await mm.stop()
    await asyncio.wait_for(task, 2.0)
    assert [set(t.player_ids) for t in rooms.created.values()] == [set("abcd")]
    assert await leases.acquire_lease(LEASE_NAME, "node-b", 5.0)  # released on the way out


# With the real room service ---------------------------------------------------------------


async def test_the_bridge_opens_a_rated_room_with_players_and_bots_seated() -> None:
    league, store = MemoryLeagueStore(), MemoryRoomStore()
    bridge = RoomsBridge(RoomService(store, BotPool(workers=0)), league)
    # The bots' level is the one whose anchor rating is closest to these players' mean (1430).
    mm = Matchmaker(
        league, store, bridge.create_table, node_id="n", abandon_table=bridge.abandon_table
    )
    await queue(league, entry("ann", 1420, joined=0.0), entry("bob", 1440, joined=0.0))
    [seated] = await mm.step(now=21.0)
    assert await league.take_assignments(["ann", "bob"]) == {
        "ann": seated.room_id,
        "bob": seated.room_id,
    }
    snap = await store.load_room(seated.room_id)
    assert snap is not None
    state = RoomState.from_bytes(snap.state)
    assert (state.kind, state.status, state.options.rated, state.options.rules.target) == (
        "quick",
        "playing",
        True,
        50,
    )
    seats = [s for s in state.seats if s is not None]
    humans = {s.player: s.name for s in seats if not s.is_bot}
    assert humans == {"ann": "Name ann", "bob": "Name bob"}
    bots = [s for s in seats if s.is_bot]
    shown = {lv: display_rating(anchor_rating(lv)) for lv in ("basic", "normal", "strong")}
    level = min(shown, key=lambda lv: abs(shown[lv] - 1430))
    assert [(b.bot, b.original) for b in bots] == [(level, f"bot:{level}")] * 2
    # Bots have names of their own, never compass points (which are true from one side only).
    assert all(b.name in BOT_NAMES for b in bots) and len({b.name for b in bots}) == 2
    await bridge.abandon_table(seated.room_id)
    assert await store.load_room(seated.room_id) is None


async def test_python_m_matchmaker_seats_tables_against_redis(clean_redis: str) -> None:
    process = build(clean_redis, prefix=TEST_PREFIX, node_id="standalone", interval=0.02)
    league = RedisLeagueStore(clean_redis, prefix=TEST_PREFIX)
    rooms = RedisRoomStore(clean_redis, prefix=TEST_PREFIX)
    task = asyncio.create_task(serve(process))
    try:
        now = await rooms.now()
        await queue(league, *(entry(p, joined=now) for p in "abcd"))
        assigned: dict[str, str] = {}
        for _ in range(200):
            assigned |= await league.take_assignments("abcd")
            if len(assigned) == 4:
                break
            await asyncio.sleep(0.02)
        assert set(assigned) == set("abcd") and len(set(assigned.values())) == 1
        snap = await rooms.load_room(assigned["a"])
        assert snap is not None
        state = RoomState.from_bytes(snap.state)
        assert sorted(s.player for s in state.seats if s is not None) == list("abcd")
    finally:
        await process.matchmaker.stop()
        await asyncio.wait_for(task, 5.0)
        await league.close()
        await rooms.close()


# Two nodes against real Redis --------------------------------------------------------------


async def test_the_lease_holder_dies_and_another_takes_over(clean_redis: str) -> None:
    leagues = [RedisLeagueStore(clean_redis, prefix=TEST_PREFIX) for _ in range(2)]
    leases = [RedisRoomStore(clean_redis, prefix=TEST_PREFIX) for _ in range(2)]
    rooms = [Rooms("a"), Rooms("b")]
    node_a, node_b = (
        Matchmaker(
            leagues[k],
            leases[k],
            rooms[k].create,
            node_id=f"node-{k}",
            interval=0.05,
            lease_ttl=0.4,
        )
        for k in range(2)
    )
    try:
        await queue(leagues[0], *(entry(f"p{i}") for i in range(4)))
        assert len(await node_a.step(now=1.0)) == 1
        assert await node_b.step(now=1.0) == [] and not node_b.leader
        # While node a passes (renewing its lease), node b stays out, past several TTLs.
        for _ in range(4):
            await asyncio.sleep(0.15)
            assert await node_a.step(now=2.0) == [] and node_a.leader  # the queue is empty
            assert await node_b.step(now=2.0) == [] and not node_b.leader
        await queue(leagues[0], *(entry(f"q{i}", joined=2.0) for i in range(4)))
        assert await node_b.step(now=2.0) == []
        assert rooms[1].created == {}
        # Node a dies: it simply never renews again. After the TTL, node b takes over.
        await asyncio.sleep(0.5)
        seated = await node_b.step(now=2.0)
        assert node_b.leader and seated_ids(seated) == [{"q0", "q1", "q2", "q3"}]
        assert await node_a.step(now=3.0) == [] and not node_a.leader
    finally:
        for store in (*leagues, *leases):
            await store.close()


@pytest.mark.parametrize("lease", ["shared", "split-brain"])
async def test_two_matchmakers_on_two_nodes_never_double_seat(clean_redis: str, lease: str) -> None:
    """Two nodes pass concurrently while players join, leave and re-queue for other targets.

    With "split-brain" both believe they hold the lease, so only the atomic seating keeps
    players from being seated twice.
    """
    leagues = [RedisLeagueStore(clean_redis, prefix=TEST_PREFIX) for _ in range(3)]
    leases = [RedisRoomStore(clean_redis, prefix=TEST_PREFIX) for _ in range(2)]
    rooms = [Rooms("a", delay=0.002), Rooms("b", delay=0.002)]
    holders = leases if lease == "shared" else [AlwaysLease(), AlwaysLease()]
    nodes = [
        Matchmaker(
            leagues[k],
            holders[k],  # type: ignore[arg-type]
            rooms[k].create,
            node_id=f"node-{k}",
            abandon_table=rooms[k].abandon,
            lease_ttl=5.0,
        )
        for k in range(2)
    ]
    clock = [0.0]
    ops: dict[
        str, list[tuple[str, int]]
    ] = {}  # player -> successful ("enqueue", target)/("dequeue", 0)
    seated: list[SeatedTable] = []
    rng = random.Random(11)
    players = [f"p{i:02d}" for i in range(80)]
    churning = True

    async def churn() -> None:
        churner = leagues[2]
        while churning:
            pid = rng.choice(players)
            if rng.random() < 0.25:
                if await churner.dequeue(pid):
                    ops.setdefault(pid, []).append(("dequeue", 0))
            else:
                target = rng.choice((50, 100))
                e = entry(pid, rng.randrange(1400, 1700), clock[0], target)
                if await churner.enqueue(e, pid):
                    ops.setdefault(pid, []).append(("enqueue", target))
            clock[0] += 0.2
            await asyncio.sleep(0)

    async def passes(node: Matchmaker) -> None:
        for _ in range(40):
            seated.extend(await node.step(now=clock[0]))
            await asyncio.sleep(0)

    try:
        churner = asyncio.create_task(churn())
        await asyncio.gather(*(passes(node) for node in nodes))
        churning = False
        await churner
        # Nobody is at two tables, and no room is seated twice.
        at_tables = [pid for s in seated for pid in s.table.player_ids]
        assert len(at_tables) == len(set(at_tables))
        assert len({s.room_id for s in seated}) == len(seated)
        assert len(seated) >= 5  # the test did exercise seating
        # Each seated player was queued, for that table's target, when seated: its last
        # successful queue operation is an enqueue for that target (assigned players cannot
        # re-queue, and leaving after seating finds nothing to leave).
        for s in seated:
            for pid in s.table.player_ids:
                assert ops[pid][-1] == ("enqueue", s.table.target)
        # Every seated player's assignment is its table's room; nobody else has one.
        assigned = await leagues[0].take_assignments(players)
        assert assigned == {pid: s.room_id for s in seated for pid in s.table.player_ids}
        # Every room made was either seated or abandoned, never both; no note is left over.
        made = {**rooms[0].created, **rooms[1].created}
        abandoned = set(rooms[0].abandoned) | set(rooms[1].abandoned)
        assert abandoned | {s.room_id for s in seated} == set(made)
        assert not abandoned & {s.room_id for s in seated}
        assert await leagues[0].take_stale_tables(1e12) == []
        if lease == "shared":  # one node acted at a time: only one ever made rooms
            assert sum(bool(r.created) for r in rooms) == 1
    finally:
        for store in (*leagues, *leases):
            await store.close()
