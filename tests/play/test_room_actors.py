"""Room actors: one compare-and-set per card, reload only on conflict, bounded and disposable
caches, and a hot state of constant size."""

from __future__ import annotations

from typing import Any

import pytest

from protocol.cards import cards_in, mask_of_names
from protocol.errors import HeartsError
from protocol.shuffle import deal_context, seat_commitment
from server.core.room.commands import (
    CommitSecret,
    Connect,
    Join,
    PassCards,
    PlayCard,
    RevealSecret,
    Start,
)
from server.core.room.game_view import game_view
from server.core.room.state import Clocks, TableOptions
from server.core.rules import Rules
from server.play.actors import Actors
from server.play.bot_pool import BotPool
from server.play.rooms import RoomService
from server.store import MemoryRoomStore, StoreUnavailable
from tests.support.room_driver import Driver

PLAYERS = ("p0", "p1", "p2", "p3")
STATE_LIMIT = 2048


class CountingStore(MemoryRoomStore):
    def __init__(self) -> None:
        super().__init__()
        self.loads = 0
        self.commits = 0
        self.fail_next_commit = False

    async def load_room(self, room_id: str) -> Any:
        self.loads += 1
        return await super().load_room(room_id)

    async def commit(self, *args: Any, **kwargs: Any) -> bool:
        self.commits += 1
        if self.fail_next_commit:
            self.fail_next_commit = False
            raise StoreUnavailable("connection reset")
        return await super().commit(*args, **kwargs)


def service(store: MemoryRoomStore, limit: int = 100) -> RoomService:
    return RoomService(store, BotPool(0), actors=Actors(limit))


async def seated_room(rooms: RoomService) -> str:
    opts = TableOptions(rules=Rules(50), clocks=Clocks(bot_think=0.0, between_hands=0.0))
    state = await rooms.create(kind="friends", host="p0", host_name="P0", options=opts)
    for p in PLAYERS:
        await rooms.apply(state.id, Join(p, p.upper(), f"n/{p}"))
        await rooms.apply(state.id, Connect(p, f"n/{p}"))
    await rooms.apply(state.id, Start("p0"))
    return state.id


async def next_move(rooms: RoomService, room: str) -> int:
    """Make one pending human decision (shuffle, pass or play); the number of commands sent."""
    state = await rooms.load(room)
    assert state is not None and state.game is not None
    sh = state.shuffle
    if sh is not None and not sh["dealt"]:
        ctx = deal_context(state.game_id, sh["hand"])
        for j, p in enumerate(PLAYERS):
            secret = bytes([j + 1]) * 32
            if sh["phase"] == "commit" and sh["commitments"][j] is None:
                await rooms.apply(room, CommitSecret(p, seat_commitment(ctx, j, secret)))
                return 1
            if sh["phase"] == "reveal" and sh["secrets"][j] is None:
                await rooms.apply(room, RevealSecret(p, secret))
                return 1
    for j, p in enumerate(PLAYERS):
        view = game_view(state.game, j)
        if view["phase"] == "passing" and not view["passed"]:
            await rooms.apply(room, PassCards(p, mask_of_names(view["hand"][:3])))
            return 1
        if view["phase"] == "playing" and view["turn"] == j:
            await rooms.apply(room, PlayCard(p, cards_in(mask_of_names(view["legal"]))[0]))
            return 1
    return 0


async def test_each_card_costs_one_commit_and_no_load() -> None:
    store = CountingStore()
    rooms = service(store)
    room = await seated_room(rooms)
    store.loads = store.commits = 0
    commands = 0
    for _ in range(60):
        commands += await next_move(rooms, room)
    assert commands == 60
    assert store.commits == commands  # one compare-and-set per command
    assert store.loads == 0  # the actor holds the room: nothing is reloaded or replayed


async def test_a_commit_by_another_node_costs_one_reload_then_one_commit() -> None:
    store = CountingStore()
    a, b = service(store), service(store)
    room = await seated_room(a)
    await b.load(room)  # node b has the room cached too
    await next_move(a, room)  # a commits: b's copy is now stale (b hears no fan-out here)
    store.loads = store.commits = 0
    await b.apply(room, Connect("p1", "n2/second-tab"))
    assert store.commits == 2 and store.loads == 1  # a conflict, one reload, the commit
    state_a, state_b = await a.load(room, fresh=True), await b.load(room)
    assert state_a is not None and state_a == state_b
    assert state_a.seats[1] is not None and "n2/second-tab" in state_a.seats[1].conns


async def test_fan_out_marks_an_actor_stale_so_it_reloads_before_its_step() -> None:
    store = CountingStore()
    a, b = service(store), service(store)
    room = await seated_room(a)
    await b.load(room)
    await next_move(a, room)
    fresh = await a.load(room)
    assert fresh is not None
    b.actors.saw(room, fresh.seq)  # what b's hub does with each event it forwards
    store.loads = store.commits = 0
    assert (await b.load(room)) == fresh
    assert store.loads == 1


async def test_a_refusal_is_decided_on_the_stores_state_and_changes_nothing() -> None:
    store = CountingStore()
    rooms = service(store)
    room = await seated_room(rooms)
    before = await rooms.load(room)
    store.loads = store.commits = 0
    with pytest.raises(HeartsError):
        await rooms.apply(room, PlayCard("p1", 0))
    assert store.loads == 1 and store.commits == 0  # refused on the copy: checked once more
    assert await rooms.load(room) == before
    store.loads = 0
    with pytest.raises(HeartsError):
        await rooms.apply(room, PlayCard("p1", 0))
    assert store.loads == 1  # refused again, on the freshly loaded state: no second load


async def test_a_move_refused_on_a_stale_copy_is_made_on_the_fresh_state() -> None:
    store = CountingStore()
    a, b = service(store), service(store)
    room = await seated_room(a)
    await b.load(room)  # b's copy: the shuffle waits for commitments
    for _ in PLAYERS:
        await next_move(a, room)  # every seat commits through a: the reveal phase opens
    state = await a.load(room)
    assert state is not None and state.shuffle is not None
    assert state.shuffle["phase"] == "reveal"
    # On b's stale copy a reveal is out of phase; decided on the store's state, it is made.
    await b.apply(room, RevealSecret("p0", bytes([1]) * 32))
    fresh = await a.load(room, fresh=True)
    assert fresh is not None and fresh.shuffle is not None
    assert fresh.shuffle["secrets"][0] is not None


async def test_an_unconfirmed_commit_drops_the_cache_and_the_room_is_reloaded() -> None:
    store = CountingStore()
    rooms = service(store)
    room = await seated_room(rooms)
    store.fail_next_commit = True
    with pytest.raises(HeartsError) as e:
        await next_move(rooms, room)
    assert e.value.code == "outcome_unknown"
    store.loads = 0
    await next_move(rooms, room)
    assert store.loads == 1  # the cache was not trusted after an unknown outcome


async def test_actors_are_bounded_and_an_evicted_room_still_works() -> None:
    store = CountingStore()
    rooms = service(store, limit=2)
    codes = [await seated_room(rooms) for _ in range(3)]
    assert len(rooms.actors) == 2
    store.loads = 0
    await next_move(rooms, codes[0])  # the least recently used one was evicted
    assert store.loads == 1
    assert len(rooms.actors) == 2


async def test_finished_hands_go_to_the_archive_not_the_state() -> None:
    store = CountingStore()
    rooms = service(store)
    room = await seated_room(rooms)
    state = await rooms.load(room)
    assert state is not None
    while state.game is not None and state.game.hand_number < 2:
        await next_move(rooms, room)
        state = await rooms.load(room)
        assert state is not None
    log = await rooms.hand_log(state)
    assert [entry["hand"] for entry in log] == [1]
    audit = await rooms.audit(state, 1)
    assert audit is not None and audit["hand"] == 1
    assert await rooms.audit(state, 2) is None
    assert b"server_secret" not in state.to_bytes()


def test_the_hot_state_stays_under_2kb_through_a_game_to_100_and_steps_copy() -> None:
    d = Driver(rules=Rules(100))
    largest = 0
    step = d.do

    def measured(command: Any) -> Any:
        nonlocal largest
        before, as_stored = d.state, d.state.to_bytes()
        events = step(command)
        assert before.to_bytes() == as_stored, "step changed its input (an actor's cache)"
        largest = max(largest, len(d.state.to_bytes()))
        return events

    d.do = measured  # type: ignore[method-assign]
    for p in PLAYERS[1:]:
        d.do(Join(p, f"Player {p}", f"node-a-1/{p}-tab1"))
    for p in PLAYERS:
        d.do(Connect(p, f"node-b-2/{p}-tab2"))  # everyone has a second tab open
    d.do(Start("p0"))
    while d.state.status == "playing":
        d.run_deadlines()
        for p in PLAYERS:
            d.human_play_lowest(p)
    assert d.state.game is not None and max(d.state.game.scores) >= 100
    assert d.state.game.hand_number >= 5
    assert largest <= STATE_LIMIT, f"the room state reached {largest} bytes"
