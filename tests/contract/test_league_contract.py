"""The league store contract: every test runs against the memory and the Redis backend.

A "peer" is a second node on the same league (another Redis connection pool; for the
in-process store, the same store). Tests named ``test_redis_*`` check Redis-only machinery.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pytest
import redis

from matchmaker.matching import QueueEntry
from server.core.ratings import Rating, conservative_rating, display_rating
from server.store import open_league_store
from server.store.accounts import Account
from server.store.league import (
    HistoryPoint,
    LadderRow,
    LeagueStore,
    PlayerRating,
    PostResult,
)
from server.store.memory.league import MemoryLeagueStore
from server.store.redis.league import RedisLeagueStore

if TYPE_CHECKING:
    from tests.conftest import LeagueFactory


def rating_for(score: int, sigma: float = 1.0) -> Rating:
    """A rating whose ladder score (the conservative rating) is exactly ``score``."""
    r = Rating((score - 1500) / 24 + 25 + 3 * sigma, sigma)
    assert conservative_rating(r) == score
    return r


def row(rank: int, pid: str, score: int, games: int) -> LadderRow:
    return LadderRow(rank, pid, f"name-{pid}", display_rating(rating_for(score)), games, score)


async def sign_up(league: LeagueStore, *ids: str) -> None:
    for pid in ids:
        assert await league.create_account(Account(pid, pid, f"key-{pid}", "$argon2id$x", 1.0))


async def post(
    league: LeagueStore,
    game_id: str,
    new: Mapping[str, tuple[Rating, int]],
    *,
    at: float = 1000.0,
    record: dict[str, Any] | None = None,
) -> PostResult:
    """Post ``new`` (id -> (rating, games)) from the versions stored now."""
    current = await league.get_players(new)
    updates = {
        pid: PlayerRating(rating, games, f"name-{pid}") for pid, (rating, games) in new.items()
    }
    expected = {pid: p.version for pid, p in current.items()}
    return await league.post_game(game_id, record or {"game": game_id}, expected, updates, at=at)


async def everything(league: LeagueStore, ids: list[str], games: list[str]) -> tuple[Any, ...]:
    """All the league holds about these players and games, to prove a call changed nothing."""
    return (
        await league.get_players(ids),
        [await league.game_record(g) for g in games],
        [await league.history(pid, 100) for pid in ids],
        [await league.recent_games(pid, 100) for pid in ids],
        await league.ladder(0, 100),
    )


# Ratings and posting -------------------------------------------------------------------------


async def test_a_new_player_has_the_default_rating(league: LeagueStore) -> None:
    players = await league.get_players(["alice", "bot:strong"])
    assert players == {"alice": PlayerRating(), "bot:strong": PlayerRating()}
    assert players["alice"].display == 1500
    assert players["alice"].version == 0 and players["alice"].provisional
    assert await league.history("alice") == []
    assert await league.recent_games("alice") == []
    assert await league.rank_of("alice") is None
    assert await league.get_players([]) == {}


async def test_set_name_does_not_bump_the_version(league: LeagueStore) -> None:
    await league.set_name("alice", "Alice")
    assert await league.get_players(["alice"]) == {"alice": PlayerRating(name="Alice")}
    assert await post(league, "g1", {"alice": (Rating(30.0, 5.0), 1)}) is PostResult.POSTED
    await league.set_name("alice", "Alice B.")
    alice = (await league.get_players(["alice"]))["alice"]
    assert (alice.name, alice.version, alice.games) == ("Alice B.", 1, 1)


async def test_post_game_writes_everything_at_once(league: LeagueStore) -> None:
    a = Rating(31.123456789012345, 6.5)  # floats must round-trip exactly
    b = Rating(18.5, 6.25)
    record = {"game_id": "room1.1", "scores": [10, 55], "departures": [], "ratings": {"a": 1}}
    result = await league.post_game(
        "room1.1",
        record,
        {"a": 0, "b": 0},
        {"a": PlayerRating(a, 1, "Ann", version=99), "b": PlayerRating(b, 1, "Bob")},
        at=1234.5,
    )
    assert result is PostResult.POSTED
    players = await league.get_players(["a", "b"])
    # The update's own version is ignored: the store sets expected + 1.
    assert players == {"a": PlayerRating(a, 1, "Ann", 1), "b": PlayerRating(b, 1, "Bob", 1)}
    assert await league.game_record("room1.1") == record
    assert await league.game_record("room1.2") is None
    assert await league.history("a") == [
        HistoryPoint("room1.1", 1234.5, a.mu, a.sigma, display_rating(a), 1)
    ]
    assert await league.recent_games("b") == [record]
    assert await league.ladder() == []  # one game: both provisional


async def test_a_game_posts_once_and_a_second_post_changes_nothing(league: LeagueStore) -> None:
    assert await post(league, "g1", {"a": (Rating(30.0, 6.0), 1)}) is PostResult.POSTED
    before = await everything(league, ["a", "b"], ["g1"])
    # Same game again, from the fresh version and with other numbers: still refused.
    again = await post(league, "g1", {"a": (Rating(40.0, 5.0), 2), "b": (Rating(1.0, 2.0), 1)})
    assert again is PostResult.ALREADY_POSTED
    assert await everything(league, ["a", "b"], ["g1"]) == before


async def test_a_stale_version_conflicts_and_changes_nothing(league: LeagueStore) -> None:
    assert await post(league, "g1", {"a": (Rating(30.0, 6.0), 1)}) is PostResult.POSTED
    before = await everything(league, ["a", "b"], ["g1", "g2"])
    stale = await league.post_game(
        "g2",
        {"game": "g2"},
        {"a": 0, "b": 0},  # a is at version 1 now
        {"a": PlayerRating(Rating(20.0, 5.0), 1), "b": PlayerRating(Rating(20.0, 5.0), 1)},
        at=1.0,
    )
    assert stale is PostResult.CONFLICT
    assert await everything(league, ["a", "b"], ["g1", "g2"]) == before
    # Re-read and retry: it goes through.
    assert await post(league, "g2", {"a": (Rating(29.0, 5.0), 2)}) is PostResult.POSTED
    assert (await league.get_players(["a"]))["a"].version == 2


async def test_already_posted_is_reported_before_a_conflict(league: LeagueStore) -> None:
    assert await post(league, "g1", {"a": (Rating(30.0, 6.0), 1)}) is PostResult.POSTED
    result = await league.post_game(
        "g1", {}, {"a": 0}, {"a": PlayerRating(Rating(1.0, 1.0), 1)}, at=1.0
    )
    assert result is PostResult.ALREADY_POSTED


async def test_concurrent_posts_from_one_version_exactly_one_wins(
    league_factory: LeagueFactory,
) -> None:
    league = league_factory()
    stores = [league, league_factory.peer(league)]
    results = await asyncio.gather(
        *(
            stores[k % 2].post_game(
                f"g{k}",
                {"k": k},
                {"a": 0},
                {"a": PlayerRating(Rating(20.0 + k, 5.0), 1)},
                at=float(k),
            )
            for k in range(8)
        )
    )
    assert sorted(r.value for r in results) == ["conflict"] * 7 + ["posted"]
    winner = results.index(PostResult.POSTED)
    assert (await league.get_players(["a"]))["a"].rating == Rating(20.0 + winner, 5.0)
    assert [p.game_id for p in await league.history("a")] == [f"g{winner}"]


async def test_a_malformed_post_is_refused_before_writing(league: LeagueStore) -> None:
    update = {"a": PlayerRating(Rating(30.0, 6.0), 1)}
    with pytest.raises(ValueError):
        await league.post_game("g1", {}, {"a": 0, "b": 0}, update, at=1.0)
    with pytest.raises(ValueError):
        await league.post_game("", {}, {"a": 0}, update, at=1.0)
    with pytest.raises(TypeError):  # not JSON
        await league.post_game("g1", {"x": object()}, {"a": 0}, update, at=1.0)
    assert await league.game_record("g1") is None
    assert await league.get_players(["a"]) == {"a": PlayerRating()}


# The ladder -----------------------------------------------------------------------------------


async def test_the_ladder_lists_only_non_provisional_players(league: LeagueStore) -> None:
    await sign_up(league, "nine", "ten")
    assert await post(league, "g1", {"nine": (rating_for(1900), 9)}) is PostResult.POSTED
    assert await post(league, "g2", {"ten": (rating_for(1600), 10)}) is PostResult.POSTED
    assert await league.ladder() == [row(1, "ten", 1600, 10)]
    assert await league.rank_of("nine") is None
    assert await league.around("nine", 3) == []
    # The tenth game puts "nine" on the ladder, above "ten".
    assert await post(league, "g3", {"nine": (rating_for(1910), 10)}) is PostResult.POSTED
    assert [(r.rank, r.player_id) for r in await league.ladder()] == [(1, "nine"), (2, "ten")]
    # A post that rates a participant as provisional takes it off the ladder.
    assert await post(league, "g4", {"ten": (rating_for(1700), 3)}) is PostResult.POSTED
    assert [r.player_id for r in await league.ladder()] == ["nine"]
    assert await league.ladder_size() == 1


async def test_the_ladder_ranks_highest_first_and_ties_share_a_rank(league: LeagueStore) -> None:
    scores = {"e": 1500, "d": 1600, "c": 1700, "b": 1700, "a": 1800, "f": 1450}
    await sign_up(league, *scores)
    for k, (pid, score) in enumerate(scores.items()):
        assert await post(league, f"g{k}", {pid: (rating_for(score), 12)}) is PostResult.POSTED
    expected = [
        row(1, "a", 1800, 12),
        row(2, "b", 1700, 12),  # equal scores: same rank, ordered by id
        row(2, "c", 1700, 12),
        row(4, "d", 1600, 12),
        row(5, "e", 1500, 12),
        row(6, "f", 1450, 12),
    ]
    assert await league.ladder(0, 100) == expected
    assert await league.ladder_size() == 6
    assert await league.ladder(2, 2) == expected[2:4]  # a page starting inside a tie
    assert await league.ladder(5, 10) == expected[5:]
    assert await league.ladder(6, 10) == []
    assert await league.ladder(0, 0) == []
    assert [await league.rank_of(pid) for pid in "abcdef"] == [1, 2, 2, 4, 5, 6]
    assert await league.around("d", 1) == expected[2:5]
    assert await league.around("a", 2) == expected[0:3]  # clipped at the top
    assert await league.around("f", 1) == expected[4:]  # and at the bottom
    assert await league.around("d", 0) == [expected[3]]
    # A rename shows on the ladder at once.
    await league.set_name("d", "Dora")
    assert (await league.around("d", 0))[0].name == "Dora"


async def test_the_ladder_lists_accounts_only_and_a_claim_lists_at_once(
    league: LeagueStore,
) -> None:
    await sign_up(league, "acct")
    assert await post(league, "g1", {"guest": (rating_for(1700), 12)}) is PostResult.POSTED
    assert await post(league, "g2", {"acct": (rating_for(1600), 12)}) is PostResult.POSTED
    assert await post(league, "g3", {"bot:strong": (rating_for(1900), 50)}) is PostResult.POSTED
    assert [r.player_id for r in await league.ladder()] == ["acct"]
    assert await league.rank_of("guest") is None
    # The guest claims its identity: its games put it on the ladder in the same step.
    await sign_up(league, "guest")
    assert await league.ladder() == [row(1, "guest", 1700, 12), row(2, "acct", 1600, 12)]
    # A claimed but still provisional guest is not listed.
    assert await post(league, "g4", {"young": (rating_for(1800), 4)}) is PostResult.POSTED
    await sign_up(league, "young")
    assert await league.ladder_size() == 2


async def test_history_and_recent_games_are_capped_newest_first(
    league_factory: LeagueFactory,
) -> None:
    league = league_factory(history_cap=3, recent_cap=2)
    for k in range(1, 6):
        result = await post(
            league, f"g{k}", {"a": (Rating(25.0 + k, 5.0), k)}, at=100.0 + k, record={"n": k}
        )
        assert result is PostResult.POSTED
    history = await league.history("a", 50)
    assert [(p.game_id, p.games, p.at, p.mu) for p in history] == [
        ("g5", 5, 105.0, 30.0),
        ("g4", 4, 104.0, 29.0),
        ("g3", 3, 103.0, 28.0),
    ]
    assert [p.game_id for p in await league.history("a", 2)] == ["g5", "g4"]
    assert await league.recent_games("a", 10) == [{"n": 5}, {"n": 4}]
    assert await league.recent_games("a", 1) == [{"n": 5}]
    assert await league.game_record("g1") == {"n": 1}  # records stay with their games


# The quick-play queue -------------------------------------------------------------------------


def entry(pid: str, display: int = 1500, target: int = 50, joined: float = 100.0) -> QueueEntry:
    return QueueEntry(pid, display, target, joined)  # type: ignore[arg-type]


async def test_a_player_is_queued_once_and_rejoining_updates(league: LeagueStore) -> None:
    assert await league.enqueue(entry("a", 1500, 50, 1.0), "Ann")
    assert await league.enqueue(entry("b", 1600, 50, 2.0), "Bob")
    assert await league.enqueue(entry("a", 1510, 100, 3.25), "Ann 2")
    assert await league.queue_entries() == [entry("b", 1600, 50, 2.0), entry("a", 1510, 100, 3.25)]
    assert await league.queue_entries(50) == [entry("b", 1600, 50, 2.0)]
    assert await league.queue_entries(100) == [entry("a", 1510, 100, 3.25)]
    assert await league.queued("a") == entry("a", 1510, 100, 3.25)
    assert await league.queued("zed") is None
    assert await league.queue_names(["a", "b", "zed"]) == {"a": "Ann 2", "b": "Bob"}


async def test_leaving_the_queue(league: LeagueStore) -> None:
    await league.enqueue(entry("a"), "Ann")
    assert await league.dequeue("a")
    assert not await league.dequeue("a")
    assert await league.queue_entries() == []
    assert await league.queue_names(["a"]) == {}
    assert await league.seat_tables([("r1", ["a"])]) == [False]


async def test_entries_not_seen_alive_are_purged(league: LeagueStore) -> None:
    await league.enqueue(entry("a", joined=100.0), "A")  # seen at its join time
    await league.enqueue(entry("b", joined=100.0), "B", now=150.0)
    await league.enqueue(entry("c", joined=100.0), "C")
    await league.enqueue(entry("d", joined=100.0), "D")
    assert await league.touch_queue(["c", "c", "gone"], 160.0) == 1  # only the queued count
    await league.seat_tables([("r1", ["d"])])  # seated players are no longer in the queue
    assert await league.purge_queue(99.0) == []
    assert await league.purge_queue(155.0) == ["a", "b"]
    assert [e.player_id for e in await league.queue_entries()] == ["c"]
    assert await league.queue_names(["a", "b", "c"]) == {"c": "C"}
    assert await league.purge_queue(155.0) == []
    assert await league.dequeue("c")
    assert await league.purge_queue(1e12) == []  # a dequeued entry leaves no trace
    assert await league.touch_queue(["c"], 170.0) == 0
    assert await league.touch_queue([], 170.0) == 0
    # A touched entry is not re-created by the touch once it is gone.
    assert await league.queue_entries() == []


async def test_seat_tables_seats_whole_tables_only(league: LeagueStore) -> None:
    for pid in "abcde":
        await league.enqueue(entry(pid), pid.upper())
    seated = await league.seat_tables(
        [("r1", ["a", "b"]), ("r2", ["c", "gone"]), ("r3", ["a", "d"]), ("r4", ["d"])]
    )
    # r2 has someone not queued; r3 reuses a, already seated at r1 in this very call.
    assert seated == [True, False, False, True]
    assert [e.player_id for e in await league.queue_entries()] == ["c", "e"]
    assert await league.take_assignment("a") == "r1"
    assert await league.take_assignment("a") is None  # read-and-delete
    assert await league.take_assignments(["b", "c", "d", "nobody"]) == {"b": "r1", "d": "r4"}
    assert await league.take_assignments(["b", "d"]) == {}
    assert await league.seat_tables([]) == []
    with pytest.raises(ValueError):
        await league.seat_tables([("r5", ["c", "c"])])


async def test_seat_tables_with_expected_entries_refuses_a_changed_entry(
    league: LeagueStore,
) -> None:
    await league.enqueue(entry("a", target=50, joined=1.0), "A")
    await league.enqueue(entry("b", target=50, joined=1.0), "B")
    decided = {e.player_id: e for e in await league.queue_entries()}
    await league.enqueue(entry("a", target=100, joined=5.0), "A")  # re-queued for 100 meanwhile
    assert await league.seat_tables([("r1", ["a", "b"])], expected=decided) == [False]
    assert len(await league.queue_entries()) == 2
    decided = {e.player_id: e for e in await league.queue_entries()}
    assert await league.seat_tables([("r1", ["a", "b"])], expected=decided) == [True]


async def test_a_player_with_an_untaken_seat_cannot_requeue(league: LeagueStore) -> None:
    await league.enqueue(entry("a"), "A")
    assert await league.seat_tables([("r1", ["a"])]) == [True]
    assert not await league.enqueue(entry("a", joined=200.0), "A")
    assert await league.queue_entries() == []
    assert await league.take_assignment("a") == "r1"
    assert await league.enqueue(entry("a", joined=200.0), "A")


async def test_an_untaken_assignment_expires(league_factory: LeagueFactory) -> None:
    league = league_factory(assignment_ttl=0.2)
    await league.enqueue(entry("a"), "A")
    assert await league.seat_tables([("r1", ["a"])]) == [True]
    await asyncio.sleep(0.3)
    assert await league.take_assignment("a") is None
    assert await league.enqueue(entry("a"), "A")


async def test_pending_tables_are_cleared_by_seating_or_marked_when_stale(
    league: LeagueStore,
) -> None:
    for pid in "abc":
        await league.enqueue(entry(pid), pid)
    await league.note_table("r1", 10.0)
    await league.note_table("r2", 20.0)
    await league.note_table("r3", 30.0)
    await league.note_table("r4", 40.0)
    assert await league.seat_tables([("r1", ["a"]), ("r2", ["gone"])]) == [True, False]
    # r1 was seated: no longer pending. r2 failed: its note stays for the abandoner.
    assert await league.take_stale_tables(25.0) == ["r2"]
    # Marked rooms are returned again until forgotten (the abandoner may have died).
    assert await league.take_stale_tables(35.0) == ["r2", "r3"]
    # A room being abandoned is never seated, even by a slow matchmaker that created it.
    assert await league.seat_tables([("r3", ["b"]), ("r4", ["c"])]) == [False, True]
    assert await league.queued("b") is not None
    await league.forget_table("r2")
    await league.forget_table("r3")
    assert await league.take_stale_tables(1e12) == []


async def test_concurrent_seating_on_two_nodes_never_double_seats(
    league_factory: LeagueFactory,
) -> None:
    league = league_factory()
    stores = [league, league_factory.peer(league)]
    players = [f"p{i}" for i in range(24)]
    for pid in players:
        await league.enqueue(entry(pid), pid)
    rng = random.Random(7)
    calls = []
    tables: dict[str, list[str]] = {}
    for c in range(16):
        batch = []
        for t in range(3):
            room = f"room-{c}-{t}"
            tables[room] = rng.sample(players, 4)
            batch.append((room, tables[room]))
        calls.append(stores[c % 2].seat_tables(batch))
    results = await asyncio.gather(*calls)
    seated_rooms = [
        room
        for c, res in enumerate(results)
        for t, ok in enumerate(res)
        if ok
        for room in [f"room-{c}-{t}"]
    ]
    assigned = await league.take_assignments(players)
    seated_players = [pid for room in seated_rooms for pid in tables[room]]
    assert len(seated_players) == len(set(seated_players))  # nobody at two tables
    assert assigned == {pid: room for room in seated_rooms for pid in tables[room]}
    queued = {e.player_id for e in await league.queue_entries()}
    assert queued == set(players) - set(seated_players)
    assert seated_rooms  # the first table of the first call to run always succeeds


def test_open_league_store_picks_the_backend(redis_url: str) -> None:
    assert isinstance(open_league_store(None), MemoryLeagueStore)
    assert isinstance(open_league_store("memory://"), MemoryLeagueStore)
    store = open_league_store(redis_url, prefix="x")
    assert isinstance(store, RedisLeagueStore) and store.prefix == "x"
    with pytest.raises(ValueError):
        open_league_store("postgres://nope")


# Redis only -------------------------------------------------------------------------------------


async def test_redis_keys_share_the_league_hash_tag(clean_redis: str) -> None:
    league = RedisLeagueStore(clean_redis, prefix="hearts-tag")
    try:
        await post(league, "g1", {"a": (rating_for(1600), 10)})
        await league.enqueue(entry("b"), "B")
        await league.enqueue(entry("c"), "C")
        await league.seat_tables([("r1", ["b"])])
        await league.note_table("r2", 1.0)
        client = redis.Redis.from_url(clean_redis)
        keys = [k.decode() for k in client.keys("*")]
        client.close()
        assert len(keys) >= 9
        assert all(k.startswith("hearts-tag:{league}:") for k in keys), keys
    finally:
        await league.close()


async def test_redis_post_survives_a_flushed_script_cache(clean_redis: str) -> None:
    league = RedisLeagueStore(clean_redis, prefix="hearts-flush")
    try:
        assert await post(league, "g1", {"a": (Rating(30.0, 6.0), 1)}) is PostResult.POSTED
        client = redis.Redis.from_url(clean_redis)
        client.script_flush()
        client.close()
        assert await post(league, "g2", {"a": (Rating(31.0, 6.0), 2)}) is PostResult.POSTED
        assert (await league.get_players(["a"]))["a"].version == 2
    finally:
        await league.close()


async def test_redis_a_retried_post_reports_its_own_success(
    clean_redis: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """redis-py may resend a script whose reply was lost; the resend must not say "already"."""
    league = RedisLeagueStore(clean_redis, prefix="hearts-retry")
    try:
        monkeypatch.setattr("server.store.redis.league.call_nonce", lambda: b"x" * 16)
        update = {"a": PlayerRating(Rating(30.0, 6.0), 1)}
        assert await league.post_game("g1", {}, {"a": 0}, update, at=1.0) is PostResult.POSTED
        assert await league.post_game("g1", {}, {"a": 0}, update, at=1.0) is PostResult.POSTED
        assert len(await league.history("a")) == 1  # applied once
        monkeypatch.setattr("server.store.redis.league.call_nonce", lambda: b"y" * 16)
        again = await league.post_game("g1", {}, {"a": 1}, update, at=1.0)
        assert again is PostResult.ALREADY_POSTED
    finally:
        await league.close()
