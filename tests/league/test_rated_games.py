"""Posting rated games: the right numbers, the record, exactly once, no lost update."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.core.bots.levels import BOT_LEVELS
from server.core.ratings import (
    Outcome,
    Rating,
    display_rating,
    new_rating,
    pair_outcome,
    rate_game,
)
from server.core.ratings.anchors import BOT_ANCHORS
from server.core.room.state import RoomState, Seat, TableOptions
from server.core.rules import Game, Moon, Rules
from server.league.posting import (
    RatedGame,
    game_record,
    post_rated_game,
    rate_participants,
    rated_game_from_room,
)
from server.store.league import LeagueStore, PlayerRating, PostResult
from server.store.memory.league import MemoryLeagueStore
from server.store.redis.league import RedisLeagueStore

NEW = new_rating()


def rated(
    game_id: str,
    participants: tuple[str, ...],
    scores: tuple[int, ...] = (10, 20, 30, 40),
    left: tuple[bool, ...] = (False,) * 4,
    at: float = 500.0,
) -> RatedGame:
    return RatedGame(
        game_id=game_id,
        participants=participants,
        names=tuple(f"Name {p}" for p in participants),
        scores=scores,
        left=left,
        target=50,
        room_id=game_id.split(".")[0],
        finished_at=at,
        departures=tuple(
            {"player": p, "reason": "left"} for p, g in zip(participants, left, strict=False) if g
        ),
    )


async def test_a_posted_game_stores_what_rate_game_computes(league: LeagueStore) -> None:
    game = rated("room.1", ("a", "b", "c", "d"))
    assert await post_rated_game(league, game) is PostResult.POSTED
    expected = rate_game([NEW] * 4, game.scores, game.left)
    players = await league.get_players("abcd")
    assert [players[p].rating for p in "abcd"] == expected
    assert all(players[p].games == 1 and players[p].version == 1 for p in "abcd")
    assert players["a"].name == "Name a"
    assert players["a"].display > players["d"].display  # the lowest score gains most
    record = await league.game_record("room.1")
    assert record is not None
    assert [s["score"] for s in record["seats"]] == [10, 20, 30, 40]
    assert record["ratings"]["a"]["before"] == {
        "mu": NEW.mu,
        "sigma": NEW.sigma,
        "display": 1500,
        "conservative": 900,
        "games": 0,
        "provisional": True,
    }
    assert record["ratings"]["d"]["after"]["mu"] == expected[3].mu
    assert record["ratings"]["d"]["change"] == display_rating(expected[3]) - 1500
    assert [h.game_id for h in await league.history("c")] == ["room.1"]
    assert await league.recent_games("b") == [record]


async def test_posting_a_game_twice_posts_it_once(league: LeagueStore) -> None:
    game = rated("room.1", ("a", "b", "c", "d"))
    assert await post_rated_game(league, game) is PostResult.POSTED
    first = await league.get_players("abcd")
    assert await post_rated_game(league, game) is PostResult.ALREADY_POSTED
    assert await league.get_players("abcd") == first
    assert len(await league.history("a")) == 1


async def test_a_leaver_is_rated_last(league: LeagueStore) -> None:
    # "a" had the best score but left: it loses to everyone still seated.
    game = rated("room.1", ("a", "b", "c", "d"), left=(True, False, False, False))
    await post_rated_game(league, game)
    players = await league.get_players("abcd")
    lowest = min(players.values(), key=lambda p: p.rating.mu)
    assert lowest is players["a"]
    assert players["a"].rating.mu < NEW.mu < players["b"].rating.mu
    record = await league.game_record("room.1")
    assert record is not None and record["seats"][0]["left"] is True
    assert record["departures"] == [{"player": "a", "reason": "left"}]


async def test_bots_are_fixed_anchors_and_never_written(league: LeagueStore) -> None:
    seats = ("alice", "bot:strong", "bob", "bot:strong")
    game = rated("room.1", seats, scores=(30, 10, 40, 20))
    assert await post_rated_game(league, game) is PostResult.POSTED
    players = await league.get_players(["alice", "bob", "bot:strong"])
    strong = BOT_ANCHORS["strong"]
    per_seat = rate_game([NEW, strong, NEW, strong], game.scores, game.left)
    # The humans: exactly rate_game's per-seat result, the bot seats at the level's anchor.
    assert players["alice"].rating == per_seat[0]
    assert players["bob"].rating == per_seat[2]
    # The bot level is not written at all: its anchor stays where the table puts it.
    assert players["bot:strong"] == PlayerRating()
    record = await league.game_record("room.1")
    assert record is not None
    line = record["ratings"]["bot:strong"]
    assert line["anchor"] and line["change"] == 0 and line["before"] == line["after"]
    assert line["after"]["display"] == display_rating(strong)


def test_every_bot_level_has_an_anchor() -> None:
    assert set(BOT_ANCHORS) == set(BOT_LEVELS)


def test_bot_seats_do_not_depend_on_seat_order() -> None:
    before = {"h": Rating(27.0, 3.0)}
    results = []
    base = [("h", 12), ("bot:normal", 30), ("bot:normal", 5), ("bot:normal", 30)]
    for order in itertools.permutations(base):
        game = rated("r.1", tuple(p for p, _ in order), scores=tuple(s for _, s in order))
        results.append(rate_participants(game, before))
    assert all(r == results[0] for r in results)
    assert set(results[0]) == {"h"}
    # Four distinct humans: exactly rate_game.
    game = rated("r.2", ("a", "b", "c", "d"), scores=(3, 3, 9, 1))
    assert list(rate_participants(game, dict.fromkeys("abcd", NEW)).values()) == rate_game(
        [NEW] * 4, game.scores, game.left
    )


# --- properties over random games -------------------------------------------------------------

participant_st = st.sampled_from(["p1", "p2", "p3", "p4", *(b.id for b in BOT_LEVELS.values())])
table_st = (
    st.lists(participant_st, min_size=4, max_size=4)
    .filter(lambda ps: len({p for p in ps if not p.startswith("bot:")}) ==
            len([p for p in ps if not p.startswith("bot:")]))
    .filter(lambda ps: any(not p.startswith("bot:") for p in ps))
)
rating_st = st.builds(
    Rating,
    mu=st.floats(min_value=5.0, max_value=45.0),
    sigma=st.floats(min_value=0.5, max_value=25.0 / 3),
)


@settings(max_examples=150, deadline=None)
@given(
    seats=table_st,
    scores=st.lists(st.integers(min_value=0, max_value=125), min_size=4, max_size=4),
    left=st.lists(st.booleans(), min_size=4, max_size=4),
    start=st.lists(rating_st, min_size=4, max_size=4),
)
def test_property_random_games_read_right(
    seats: list[str], scores: list[int], left: list[bool], start: list[Rating]
) -> None:
    left = [gone and not p.startswith("bot:") for p, gone in zip(seats, left, strict=True)]
    game = rated("r.1", tuple(seats), scores=tuple(scores), left=tuple(left))
    before = {p: start[i] for i, p in enumerate(seats) if not p.startswith("bot:")}
    after = rate_participants(game, before)
    # Bots are anchors: never rated, so two seats of one bot identity never rate each other.
    assert set(after) == set(before)
    record = game_record(game, {p: PlayerRating(r, 3) for p, r in before.items()}, after)
    for i, p in enumerate(seats):
        line = record["ratings"][p]
        if p.startswith("bot:"):
            assert line["change"] == 0 and line["before"] == line["after"]
            continue
        outcomes = {
            pair_outcome(scores[i], left[i], scores[k], left[k]) for k in range(4) if k != i
        }
        # The shown number and the shown change follow the result.
        assert line["change"] == line["after"]["display"] - line["before"]["display"]
        if outcomes == {Outcome.WIN}:
            assert after[p].mu > before[p].mu and line["change"] >= 0
        if outcomes == {Outcome.LOSS}:
            assert after[p].mu < before[p].mu and line["change"] <= 0
    # Seat order does not matter (anchors included).
    order = [3, 1, 0, 2]
    moved = rated(
        "r.1",
        tuple(seats[j] for j in order),
        scores=tuple(scores[j] for j in order),
        left=tuple(left[j] for j in order),
    )
    assert rate_participants(moved, before) == after


def test_a_rated_game_is_well_formed() -> None:
    with pytest.raises(ValueError):
        rated("r.1", ("a", "b", "c"))
    with pytest.raises(ValueError):
        rated("r.1", ("a", "a", "c", "d"))  # a player in two seats
    with pytest.raises(ValueError):
        rated("r.1", ("a", "bot:basic", "c", "d"), left=(False, True, False, False))
    with pytest.raises(ValueError):
        rated("", ("a", "b", "c", "d"))


class Interfering(MemoryLeagueStore):
    """Another game of player "a" lands just before each of our first ``times`` posts."""

    def __init__(self, times: int) -> None:
        super().__init__()
        self.times = times
        self.posts = 0

    async def post_game(self, game_id: str, *args: Any, **kwargs: Any) -> PostResult:
        self.posts += 1
        if game_id != "other" and self.posts <= self.times:
            current = (await self.get_players(["a"]))["a"]
            bumped = PlayerRating(Rating(current.rating.mu + 1.0, 4.0), current.games + 1, "a")
            await super().post_game(
                f"other{self.posts}", {}, {"a": current.version}, {"a": bumped}, at=1.0
            )
        return await super().post_game(game_id, *args, **kwargs)


async def test_a_conflict_is_recomputed_from_the_new_pre_game_ratings() -> None:
    store = Interfering(times=2)
    game = rated("room.1", ("a", "b", "c", "d"))
    assert await post_rated_game(store, game) is PostResult.POSTED
    assert store.posts == 3  # two conflicts, then through
    a_before = Rating(NEW.mu + 2.0, 4.0)  # after the two interfering games
    expected = rate_game([a_before, NEW, NEW, NEW], game.scores, game.left)
    players = await store.get_players("abcd")
    assert [players[p].rating for p in "abcd"] == expected
    assert (players["a"].games, players["a"].version) == (3, 3)


async def test_posting_gives_up_after_bounded_conflicts_writing_nothing() -> None:
    store = Interfering(times=100)
    game = rated("room.1", ("a", "b", "c", "d"))
    assert await post_rated_game(store, game, max_attempts=3) is PostResult.CONFLICT
    assert store.posts == 3
    assert await store.game_record("room.1") is None
    assert (await store.get_players("b"))["b"] == PlayerRating()


# Real Redis, two nodes -------------------------------------------------------------------------


async def test_concurrent_posts_of_one_game_on_two_nodes_post_once(clean_redis: str) -> None:
    nodes = [RedisLeagueStore(clean_redis, prefix="hearts-post") for _ in range(2)]
    try:
        game = rated("room.1", ("a", "b", "bot:strong", "d"))
        results = await asyncio.gather(*(post_rated_game(nodes[k % 2], game) for k in range(10)))
        assert results.count(PostResult.POSTED) == 1
        assert results.count(PostResult.ALREADY_POSTED) == 9
        expected = rate_game([NEW, NEW, BOT_ANCHORS["strong"], NEW], game.scores, game.left)
        humans = ["a", "b", "d"]
        players = await nodes[1].get_players(humans)
        assert [players[p].rating for p in humans] == [expected[0], expected[1], expected[3]]
        assert all(p.games == 1 and p.version == 1 for p in players.values())
        assert await nodes[0].history("bot:strong", 50) == []
    finally:
        for node in nodes:
            await node.close()


def _chain_holds(player: str, records: list[dict[str, Any]], final: PlayerRating) -> None:
    """Each of a player's games was rated from the rating the previous one left."""
    previous: Mapping[str, Any] = {"mu": NEW.mu, "sigma": NEW.sigma, "games": 0}
    for record in records:
        change = record["ratings"][player]
        assert change["before"]["mu"] == previous["mu"]
        assert change["before"]["sigma"] == previous["sigma"]
        assert change["before"]["games"] == previous["games"]
        previous = change["after"]
    assert (previous["mu"], previous["sigma"], previous["games"]) == (
        final.rating.mu,
        final.rating.sigma,
        final.games,
    )


async def test_concurrent_games_sharing_players_lose_no_update(clean_redis: str) -> None:
    nodes = [RedisLeagueStore(clean_redis, prefix="hearts-post") for _ in range(2)]
    try:
        pool = ["p0", "p1", "p2", "p3", "p4", "p5"]
        games = []
        for g in range(12):
            humans = [pool[(g + k) % 6] for k in range(3)]
            games.append(
                rated(f"room{g}.1", (*humans, "bot:normal"), scores=(g % 5, 7, (3 * g) % 11, 6))
            )
        results = await asyncio.gather(
            *(post_rated_game(nodes[k % 2], game) for k, game in enumerate(games))
        )
        assert results == [PostResult.POSTED] * len(games)
        ids = pool
        players = await nodes[0].get_players(ids)
        assert players["p0"].games == sum("p0" in g.participants for g in games) == 6
        for pid in ids:
            records = list(reversed(await nodes[1].recent_games(pid, 50)))
            assert len(records) == players[pid].games == players[pid].version
            _chain_holds(pid, records, players[pid])
            # And each step is exactly the rating rule applied to what it started from.
            for record in records:
                game = next(g for g in games if g.game_id == record["game_id"])
                before = {
                    p: Rating(v["before"]["mu"], v["before"]["sigma"])
                    for p, v in record["ratings"].items()
                    if not v["anchor"]
                }
                after = rate_participants(game, before)[pid]
                assert record["ratings"][pid]["after"]["mu"] == after.mu
    finally:
        for node in nodes:
            await node.close()


# From a finished room --------------------------------------------------------------------------


def finished_room(**options: Any) -> RoomState:
    rules = options.pop("rules", Rules(50))
    state = RoomState(
        id="room7",
        kind="quick",
        host=None,
        options=TableOptions(rules=rules, rated=options.pop("rated", True)),
        seed=b"\x00" * 32,
        created=1.0,
    )
    state.seats = [
        Seat(name="Ann", player="a", original="a"),
        Seat(name="Bob (bot)", bot="strong", original="b"),  # Bob left; a bot finished it
        Seat(name="East Strong Bot", bot="strong", original="bot:strong"),
        Seat(name="Dee", player="d", original="d"),
    ]
    state.departures = [{"seat": 1, "player": "b", "reason": "booted", "at": 9.0, "hand": 2}]
    state.game = Game(rules)
    state.game.scores = [12, 3, 40, 55]
    state.game_number = 1
    state.status = "finished"
    return state


def test_a_rated_game_from_a_finished_room() -> None:
    game = rated_game_from_room(finished_room(), finished_at=77.0)
    assert game == RatedGame(
        game_id="room7.1",
        participants=("a", "b", "bot:strong", "d"),
        names=("Ann", "Bob", "East Strong Bot", "Dee"),
        scores=(12, 3, 40, 55),
        left=(False, True, False, False),
        target=50,
        room_id="room7",
        finished_at=77.0,
        departures=({"seat": 1, "player": "b", "reason": "booted", "at": 9.0, "hand": 2},),
    )
    assert game.name_of("bot:strong") == "Strong Bot"


def test_unrated_or_unfinished_rooms_give_no_rated_game() -> None:
    assert rated_game_from_room(finished_room(rated=False), 1.0) is None
    assert rated_game_from_room(finished_room(rules=Rules(50, Moon.SHOOTER_CHOOSES)), 1.0) is None
    playing = finished_room()
    playing.status = "playing"
    assert rated_game_from_room(playing, 1.0) is None


def test_the_reported_game_reads_right_now() -> None:
    """Issue 16's game: three strong bots and a new player who finished third of four."""
    seats = ("bot:strong", "bot:strong", "me", "bot:strong")
    game = rated("quick.1", seats, scores=(31, 32, 39, 54))
    after = rate_participants(game, {"me": NEW})
    record = game_record(game, {"me": PlayerRating()}, after)
    lines = record["ratings"]
    # The bots were not compared with themselves, and nobody's number moved for a bot.
    assert lines["bot:strong"]["change"] == 0 and set(after) == {"me"}
    # The player beat one bot and lost to two, all three rated well above a newcomer (the
    # calibrated strong anchor): about what was expected, so a small change either way, never
    # the bots' +287 of the report; the number shown is the one the change leads to.
    assert -100 < lines["me"]["change"] < 100
    assert lines["me"]["after"]["display"] == 1500 + lines["me"]["change"]
    assert lines["me"]["after"]["provisional"] is True
