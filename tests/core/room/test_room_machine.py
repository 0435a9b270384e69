"""The room state machine with injected time: seating, a whole game, audiences, clocks, booting."""

from __future__ import annotations

from dataclasses import replace

import msgpack
import pytest

from protocol.cards import cards_in, mask_of_names, names_of
from protocol.errors import HeartsError
from server.core.room.clocks import deciding_seats, next_deadline
from server.core.room.commands import (
    ALL,
    ArchivedGame,
    Boot,
    Connect,
    Disconnect,
    FillBots,
    GamesArchived,
    Join,
    Leave,
    PassCards,
    PlayCard,
    Rematch,
    Start,
    Tick,
)
from server.core.room.machine import step
from server.core.room.state import STORED_FIELDS, Clocks, RoomState
from server.core.room.views import room_view, visible
from server.core.rules import Phase, Rules
from tests.support.room_driver import Driver


def seated_game(
    humans: int = 1, clocks: Clocks | None = None, rules: Rules | None = None
) -> Driver:
    d = Driver(rules=rules, clocks=clocks or Clocks(bot_think=0.0, between_hands=0.0))
    for k in range(1, humans):
        d.do(Join(f"p{k}", f"Player {k}", conn=f"c{k}"))
    d.do(Connect("p0", "c0"))
    d.do(FillBots("p0"))
    d.do(Start("p0"))
    d.settle_shuffle()
    return d


def test_first_three_to_open_the_link_sit_later_arrivals_watch() -> None:
    d = Driver()
    for k in range(1, 6):
        d.do(Join(f"p{k}", f"P{k}"))
    st = d.state
    assert [s.player for s in st.seats] == ["p0", "p1", "p2", "p3"]
    assert st.spectators == ["p4", "p5"]
    d.do(Join("p1", "P1"))  # opening the link again changes nothing
    assert st.spectators == ["p4", "p5"]


def test_only_the_host_fills_bots_and_starts_and_only_when_full() -> None:
    d = Driver()
    d.do(Join("p1", "P1"))
    with pytest.raises(HeartsError) as e:
        d.do(FillBots("p1"))
    assert e.value.code == "not_host"
    with pytest.raises(HeartsError) as e:
        d.do(Start("p0"))
    assert e.value.code == "not_ready"
    d.do(FillBots("p0"))
    assert [s.is_bot for s in d.state.seats] == [False, False, True, True]
    d.do(Start("p0"))
    d.settle_shuffle()
    assert d.state.status == "playing" and d.phase is Phase.PASSING


def test_one_human_and_three_bots_play_a_whole_game() -> None:
    d = seated_game(humans=1)
    while d.state.status == "playing":
        d.run_deadlines()
        if d.state.status == "playing":
            d.human_play_lowest("p0")
    game = d.state.game
    assert d.state.status == "finished" and game.over
    assert max(game.scores) >= 50
    over = [e for e in d.events if e.type == "game_over"]
    assert len(over) == 1 and over[0].data["winners"] == game.winners
    assert [e.data["scores"] for e in d.events if e.type == "hand_over"][-1] == game.scores
    # Sequence numbers count every event.
    assert d.state.seq == len(d.events)


def test_a_refused_command_changes_nothing() -> None:
    d = seated_game(humans=2)
    before = d.state.to_bytes()
    for bad in [
        PlayCard("p1", 0),
        PlayCard("nobody", 0),
        Boot("p1", 0),
        Start("p0"),
        Rematch("p0"),
    ]:
        with pytest.raises(HeartsError):
            step(d.state, bad, d.now)
    assert d.state.to_bytes() == before


def test_private_events_go_only_to_their_seat() -> None:
    d = seated_game(humans=1)
    dealt = [e for e in d.events if e.type == "dealt"]
    assert sorted(e.audience for e in dealt) == [0, 1, 2, 3]
    hands = {e.audience: set(e.data["cards"]) for e in dealt}
    for seat in range(4):
        seen = [e for e in d.events if visible(e.audience, seat)]
        others = set().union(*(hands[s] for s in range(4) if s != seat))
        for e in seen:
            if e.type in ("dealt", "your_turn", "passed", "received"):
                assert not others & set(e.data.get("cards", []) + e.data.get("legal", []))
    spectator = [e for e in d.events if visible(e.audience, None)]
    assert all(e.audience == ALL for e in spectator)
    view = room_view(d.state, None)
    assert "hand" not in view["game"] and "legal" not in view["game"]
    assert room_view(d.state, 0)["game"]["hand"] == names_of(d.state.game.hand.hands[0])


def test_state_round_trips_through_bytes() -> None:
    d = seated_game(humans=2)
    d.run_deadlines()
    again = RoomState.from_bytes(d.state.to_bytes())
    assert again.to_bytes() == d.state.to_bytes()
    assert again.game == d.state.game
    assert again == d.state


def test_the_shuffle_is_stored_as_raw_bytes_and_hex_from_before_still_loads() -> None:
    d = seated_game(humans=2)  # the shuffle settled: two seats' commitments and secrets held
    sh = d.state.shuffle
    assert sh is not None and sum(c is not None for c in sh["commitments"]) == 2
    data = d.state.to_bytes()
    stored = msgpack.unpackb(data, raw=False)
    index = STORED_FIELDS.index("shuffle")
    for name in ("commitments", "secrets"):
        held = [x for x in stored[index][name] if x is not None]
        assert len(held) == 2 and all(isinstance(x, bytes) and len(x) == 32 for x in held)
    again = RoomState.from_bytes(data)
    assert again == d.state and again.shuffle == sh  # raw, as the steps hold them
    # A room stored before: its commitments and secrets as 64 hex digits.
    stored[index] = {
        k: [None if x is None else x.hex() for x in v] if k in ("commitments", "secrets") else v
        for k, v in sh.items()
    }
    before = msgpack.packb(stored, use_bin_type=True)
    assert len(before) - len(data) == 4 * 32  # two commitments and two secrets, 32 bytes each
    assert RoomState.from_bytes(before) == d.state


def test_a_state_stored_as_a_map_still_loads() -> None:
    """Rooms stored before the state went positional are a map of the same field names."""
    d = seated_game(humans=2)
    d.run_deadlines()
    stored = msgpack.unpackb(d.state.to_bytes(), raw=False)
    assert isinstance(stored, list) and len(stored) == len(STORED_FIELDS)
    stored_as = dict(zip(STORED_FIELDS, stored, strict=True))
    for name in ("id", "kind", "status", "seq", "next_hand_at", "archive_due", "outage_seen"):
        assert stored_as[name] == getattr(d.state, name)  # each value under its own name
    as_map = msgpack.packb(stored_as, use_bin_type=True)
    again = RoomState.from_bytes(as_map)
    assert again == d.state
    assert again.to_bytes() == d.state.to_bytes()


# -- clocks --------------------------------------------------------------------------------

CLOCKS = Clocks(
    grace_play=5,
    grace_pass=10,
    bank=30,
    reconnect=30,
    boot_window=15,
    lag_cap=1,
    bot_think=0.0,
    between_hands=0.0,
)


def to_human_turn(d: Driver, player: str) -> int:
    seat = d.state.seat_of(player)
    for _ in range(200):
        d.run_deadlines()
        if seat in deciding_seats(d.state):
            return seat
        for p in ("p0", "p1", "p2", "p3"):
            if p != player and d.state.seat_of(p) in deciding_seats(d.state):
                d.human_play_lowest(p)
    raise AssertionError("never became the human's turn")


def test_time_within_the_grace_is_not_charged_and_past_it_is_charged_exactly() -> None:
    d = seated_game(humans=1, clocks=CLOCKS)
    assert d.phase is Phase.PASSING
    d.now += 9.5  # inside the 10 s pass grace
    d.human_play_lowest("p0")
    assert seat_bank(d, 0) == 30
    to_human_turn(d, "p0")
    d.now += 5 + 7  # 7 s past the play grace
    view = d.state
    legal = cards_in(mask_of_names(room_view(view, 0)["game"]["legal"]))
    d.do(PlayCard("p0", legal[0], lag=0.4))
    assert seat_bank(d, 0) == pytest.approx(30 - 7 + 0.4)


def seat_bank(d: Driver, i: int) -> float:
    return d.state.seats[i].bank


def test_lag_credit_is_capped() -> None:
    d = seated_game(humans=1, clocks=CLOCKS)
    d.now += 10 + 4
    view = room_view(d.state, 0)["game"]
    d.do(PassCards("p0", mask_of_names(view["hand"][:3]), lag=9.0))
    assert seat_bank(d, 0) == pytest.approx(30 - 4 + 1)


def test_pass_clocks_run_for_every_seat_at_once() -> None:
    d = seated_game(humans=3, clocks=CLOCKS)
    d.run_deadlines()  # the bot passes
    starts = {i: d.state.seats[i].turn_since for i in range(3)}
    assert all(t == d.now for t in starts.values())
    assert set(deciding_seats(d.state)) == {0, 1, 2}


def test_bank_out_then_another_human_boots_and_a_bot_finishes() -> None:
    d = seated_game(humans=2, clocks=CLOCKS)
    d.do(Connect("p1", "c1"))
    seat = to_human_turn(d, "p1")
    with pytest.raises(HeartsError) as e:
        d.do(Boot("p0", seat))
    assert e.value.code == "not_bootable"
    d.now = next_deadline(d.state)  # grace + bank + lag cap
    d.do(Tick())
    assert d.state.seats[seat].out_of_time_at is not None
    assert any(e.type == "out_of_time" for e in d.events)
    with pytest.raises(HeartsError):
        d.do(Boot("p1", seat))  # not yourself
    d.do(Boot("p0", seat))
    assert d.state.seats[seat].is_bot
    assert d.state.departures[-1]["reason"] == "booted"
    with pytest.raises(HeartsError) as e:
        d.do(Boot("p0", seat))  # only once: it is a bot now
    assert e.value.code == "not_bootable"
    with pytest.raises(HeartsError) as e:
        d.do(PlayCard("p1", 0))  # the booted player cannot act for the seat again
    assert e.value.code == "not_seated"


def test_nobody_boots_within_the_window_then_the_server_does() -> None:
    d = seated_game(humans=2, clocks=CLOCKS)
    d.do(Connect("p1", "c1"))
    seat = to_human_turn(d, "p1")
    d.now = next_deadline(d.state)
    d.do(Tick())
    d.now += 14.9
    d.do(Tick())
    assert not d.state.seats[seat].is_bot
    d.now += 0.2
    d.do(Tick())
    assert d.state.seats[seat].is_bot
    assert d.state.departures[-1]["reason"] == "silent"


def test_alone_with_bots_the_clock_boots_nobody_by_default() -> None:
    d = seated_game(humans=1, clocks=CLOCKS)
    d.run_deadlines()  # the bots pass; the human does not
    d.now = 1000.0 + 10 + 30 + 1 + 3600  # an hour past the bank, still connected
    events = d.do(Tick())
    assert not d.state.seats[0].is_bot and d.state.seats[0].out_of_time_at is None
    assert not [e for e in events if e.kind in ("out_of_time", "replaced")]
    assert d.state.game.phase is Phase.PASSING  # still waiting on the human's pass


def test_alone_with_bots_the_only_human_is_not_replaced_while_connected() -> None:
    d = seated_game(humans=1, clocks=CLOCKS)
    d.run_deadlines()
    d.do(Disconnect("p0", "c0"))
    d.now += CLOCKS.reconnect - 0.1
    d.do(Tick())
    assert not d.state.seats[0].is_bot
    d.do(Connect("p0", "c1"))  # back in time: the seat is theirs
    d.now += 3600
    d.do(Tick())
    assert not d.state.seats[0].is_bot
    d.do(Disconnect("p0", "c1"))  # gone past the reconnect grace: a bot plays the seat
    d.now += CLOCKS.reconnect
    d.do(Tick())
    assert d.state.seats[0].is_bot and d.state.departures[-1]["reason"] == "silent"


def test_alone_with_bots_and_the_host_clock_on_an_idle_player_is_replaced() -> None:
    d = seated_game(humans=1, clocks=CLOCKS)
    d.state.options = replace(d.state.options, solo_clock=True)
    d.run_deadlines()  # the bots pass; the human does not
    assert next_deadline(d.state) == 1000.0 + 10 + 30 + 1
    d.now = next_deadline(d.state)
    d.do(Tick())
    assert d.state.seats[0].is_bot
    d.run_deadlines()
    assert d.state.status == "playing" or d.state.status == "finished"


def test_leaving_puts_a_bot_in_at_once() -> None:
    d = seated_game(humans=2, clocks=CLOCKS)
    d.do(Leave("p1"))
    assert d.state.seats[1].is_bot and d.state.departures[-1]["reason"] == "left"
    assert d.state.seats[1].bot_due == d.now  # it was deciding its pass: the bot acts now


def test_disconnected_past_reconnect_grace_can_be_booted_with_bank_left() -> None:
    d = seated_game(humans=2, clocks=CLOCKS)
    d.do(Connect("p1", "c1"))
    d.do(Disconnect("p1", "c1"))
    d.now += 29
    with pytest.raises(HeartsError):
        d.do(Boot("p0", 1))
    d.now += 1.5
    d.do(Boot("p0", 1))
    assert d.state.seats[1].is_bot


def test_a_stale_disconnect_does_not_unseat_a_reconnected_player() -> None:
    d = seated_game(humans=2, clocks=CLOCKS)
    d.do(Connect("p1", "c1"))
    d.do(Connect("p1", "c2"))  # reconnected on another node
    d.do(Disconnect("p1", "c1"))
    assert d.state.seats[1].connected


def test_bank_resets_each_hand() -> None:
    d = seated_game(humans=1, clocks=CLOCKS)
    d.now += 10 + 20
    d.human_play_lowest("p0")
    assert seat_bank(d, 0) == pytest.approx(10)
    while d.state.game.hand_number == 1:
        d.run_deadlines()
        d.human_play_lowest("p0")
    assert seat_bank(d, 0) == 30


def test_moon_choice_unanswered_picks_others_26() -> None:
    from server.core.rules import Moon
    from tests.core.rules.test_rules import game_at_no_pass_hand, moon_deal, play_lowest

    rules = Rules(moon=Moon.SHOOTER_CHOOSES)
    d = seated_game(humans=1, clocks=CLOCKS, rules=rules)
    game = game_at_no_pass_hand(rules)
    game.start_hand(moon_deal())
    play_lowest(game)  # seat 0, the human, took every point
    assert game.phase is Phase.MOON_CHOICE
    d.state.game = game
    for seat in d.state.seats:
        seat.turn_since = seat.bot_due = None
    d.state.seats[0].turn_since = d.now
    d.now += 10 + 30 + 1
    d.do(Tick())
    assert any(e.type == "moon_chosen" and e.data.get("timeout") for e in d.events)
    assert d.state.game.history[-1] == [0, 26, 26, 26]
    assert d.state.game.phase is not Phase.MOON_CHOICE


def test_an_outage_is_given_back_to_every_clock_once() -> None:
    from server.core.room.commands import ShiftClocks

    d = seated_game(humans=1, clocks=CLOCKS)
    d.state.options = replace(d.state.options, solo_clock=True)
    d.run_deadlines()
    since = d.state.seats[0].turn_since
    due = next_deadline(d.state)
    d.do(ShiftClocks(outage=5000.0, delta=120.0))
    assert d.state.seats[0].turn_since == since + 120
    assert next_deadline(d.state) == due + 120
    d.do(ShiftClocks(outage=5000.0, delta=120.0))  # the same outage again: nothing moves
    assert d.state.seats[0].turn_since == since + 120
    d.now = due + 60  # past the old deadline, within the new one: not out of time
    d.do(Tick())
    assert d.state.seats[0].out_of_time_at is None and not d.state.seats[0].is_bot


def test_every_tick_leaves_the_room_with_nothing_already_due() -> None:
    """A Tick at ``now`` must move every deadline past ``now``, or a node would spin on it."""
    import random

    from server.core.room.commands import Disconnect as Drop

    rng = random.Random(5)
    for trial in range(6):
        d = seated_game(humans=2, clocks=CLOCKS)
        d.do(Connect("p1", "c1"))
        for _ in range(400):
            if d.state.status != "playing":
                break
            r = rng.random()
            if r < 0.05:
                d.do(Drop(rng.choice(["p0", "p1"]), rng.choice(["c0", "c1"])))
            elif r < 0.5:
                for p in ("p0", "p1"):
                    d.human_play_lowest(p) if d.state.seat_of(p) is not None else None
            d.settle_shuffle()
            d.bot_moves()
            d.now += rng.choice([0.0, 0.5, 3.0, 20.0])
            d.do(Tick())
            due = next_deadline(d.state)
            bots_due = any(
                s is not None and s.bot_due is not None and s.bot_due <= d.now
                for s in d.state.seats
            )
            # the archive's outbox waits for the shell (due.ArchiveDue), as bots do
            archive_due = bool(d.state.unarchived) and d.state.archive_due == due
            # ... and so does the push outbox (notices.NoticesDue)
            push = d.state.push["q"] if d.state.push else []
            push_due = any(entry[3] == due for entry in push)
            assert due is None or due > d.now or bots_due or archive_due or push_due, (
                trial,
                due,
                d.now,
            )


def test_a_finished_room_with_a_vanished_player_is_never_due() -> None:
    d = seated_game(humans=2, clocks=CLOCKS)
    d.do(Connect("p1", "c1"))
    while d.state.status == "playing":
        d.run_deadlines()
        for p in ("p0", "p1"):
            d.human_play_lowest(p)
    d.do(Disconnect("p0", "c0"))
    d.do(Disconnect("p1", "c1"))  # everyone has gone home
    assert d.state.seats[1].away_since is not None
    assert d.state.unarchived == [d.state.game_id]  # the finishing step filled the outbox
    assert next_deadline(d.state) == d.state.archive_due
    d.do(GamesArchived((ArchivedGame(d.state.game_id),)))
    assert d.state.unarchived == [] and d.state.archive_due is None
    d.now += 3600
    assert next_deadline(d.state) is None


def test_the_archive_outbox_keeps_a_game_until_the_store_takes_it() -> None:
    d = seated_game(humans=2, clocks=CLOCKS)
    while d.state.status == "playing":
        d.run_deadlines()
        for p in ("p0", "p1"):
            d.human_play_lowest(p)
    first = d.state.game_id
    assert d.state.game_finished >= d.state.game_started > 0
    d.do(GamesArchived(None, retry_at=d.now + 2))  # the database failed: asked again later
    assert d.state.unarchived == [first] and d.state.archive_due == d.now + 2
    d.do(Rematch("p0"))  # play goes on; the finished game stays in the outbox
    assert d.state.game_id != first and d.state.unarchived == [first]
    seats = ({"change": 3}, None, None, None)
    events = d.do(GamesArchived((ArchivedGame(first, seats),)))
    assert [(e.type, e.data["game"]) for e in events] == [("ratings", first)]
    assert d.state.unarchived == [] and d.state.archive_due is None
    assert d.do(GamesArchived((ArchivedGame(first, seats),))) == []  # a retry shows nothing


def test_a_correspondence_game_can_be_ended_after_48_hours_on_one_seat() -> None:
    from server.core.room.commands import EndGame

    rules_clocks = Clocks(bot_think=0.0, between_hands=0.0)
    d = Driver(clocks=rules_clocks)
    d.state.options = type(d.state.options)(
        rules=d.state.options.rules, pace="correspondence", clocks=rules_clocks
    )
    d.do(Join("p1", "Slow"))
    d.do(FillBots("p0"))
    d.do(Start("p0"))
    d.settle_shuffle()
    d.run_deadlines()
    d.human_play_lowest("p0")  # p0 passes; p1 never does
    d.now += 47 * 3600
    d.do(Tick())
    assert not d.state.seats[1].is_bot  # no clocks boot anyone at this pace
    with pytest.raises(HeartsError) as e:
        d.do(EndGame("p0"))
    assert e.value.code == "cannot_end_game"
    d.now += 2 * 3600
    with pytest.raises(HeartsError):
        d.do(EndGame("p1"))  # not the seat that is waited on
    d.do(EndGame("p0"))
    assert d.state.status == "finished"
    over = [e for e in d.events if e.type == "game_over"][-1]
    assert 1 not in over.data["winners"]
