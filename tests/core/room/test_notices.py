"""The push outbox, pure: which seat is to be told what and when, the lease that is the retry's
backoff, one push per room and player per interval, and stale notices dropped."""

from __future__ import annotations

from dataclasses import replace

from server.core.room.clocks import deciding_seats, next_deadline
from server.core.room.commands import (
    Connect,
    Disconnect,
    EndGame,
    FillBots,
    Join,
    NoticesSent,
    NoticesTaken,
    Start,
    Tick,
)
from server.core.room.notices import notices_due
from server.core.room.state import STORED_FIELDS, Clocks, RoomState
from tests.support.room_driver import Driver

WAIT = 48 * 3600.0


def table(pace: str, away: bool = True) -> Driver:
    """Ann (p0, at the table) and Bob (p1, whose socket is gone if ``away``), two bots."""
    d = Driver(clocks=Clocks(bot_think=0.0, between_hands=0.0, reconnect=30.0))
    d.state.options = replace(d.state.options, pace=pace)
    d.do(Join("p1", "Bob", conn="c1"))
    d.do(Connect("p0", "c0"))
    d.do(FillBots("p0"))
    if away:
        d.do(Disconnect("p1", "c1"))
    d.do(Start("p0"))
    d.settle_shuffle()
    return d


def queue(d: Driver) -> list[list[object]]:
    return d.state.push["q"] if d.state.push else []


def test_an_away_seat_gets_a_turn_notice_with_the_move_that_makes_it_its_turn() -> None:
    d = table("correspondence")
    assert 1 in deciding_seats(d.state)  # the pass: every seat decides
    [entry] = queue(d)
    assert entry[:2] == ["p1", "turn"] and entry[3] == d.now
    assert next_deadline(d.state) == d.now  # due at once: the scheduler ticks the room
    due = notices_due(d.state, d.now)
    assert due is not None and due.drop == ()
    [n] = due.send
    assert (n.player, n.kind, n.table, n.pace, n.urgency, n.attempt) == (
        "p1", "turn", "Ann", "correspondence", "normal", 1,
    )
    assert "card" not in repr(n) and "hand" not in repr(n)


def test_the_lease_is_the_backoff_and_sent_takes_it_out_for_a_minute() -> None:
    d = table("correspondence")
    [n] = notices_due(d.state, d.now).send  # type: ignore[union-attr]
    d.do(NoticesTaken((n.key,), (), retry=15.0))
    assert notices_due(d.state, d.now) is None and queue(d)[0][3] == d.now + 15
    d.now += 15
    [again] = notices_due(d.state, d.now).send  # type: ignore[union-attr]
    assert again.key == n.key and again.attempt == 2
    d.do(NoticesTaken((n.key,), (), retry=15.0))
    assert queue(d)[0][3] == d.now + 30  # twice as long
    d.do(NoticesSent((("p1", n.key),), interval=60.0))
    assert queue(d) == [] and d.state.push is not None and d.state.push["ok"] == {"p1": d.now + 60}


def test_a_seat_at_the_table_is_never_noticed_and_one_that_leaves_mid_decision_is() -> None:
    d = table("live", away=False)
    assert queue(d) == []
    assert d.state.push is None  # nothing stored on a card's commit
    d.do(Disconnect("p1", "c1"))  # the phone's screen went off during the pass
    [entry] = queue(d)
    assert entry[:2] == ["p1", "turn"]
    [n] = notices_due(d.state, d.now).send  # type: ignore[union-attr]
    assert n.urgency == "high" and n.ttl == 120
    d.do(Connect("p1", "c9"))  # back before the push went: it is dropped, not sent
    due = notices_due(d.state, d.now)
    assert due is not None and due.send == () and due.drop == (n.key,)
    d.do(NoticesTaken((), due.drop))
    assert d.state.push is None


def test_a_live_seat_a_bot_took_is_not_pushed_any_more() -> None:
    d = table("live")
    d.do(Disconnect("p0", "c0"))  # nobody at the table: the reconnect grace runs out
    d.now += 31
    d.do(Tick())
    assert d.state.seats[1].is_bot
    due = notices_due(d.state, d.now)
    assert due is not None and due.send == ()


def test_one_push_per_room_and_player_per_interval_the_newest_waiting() -> None:
    d = table("correspondence")
    [n] = notices_due(d.state, d.now).send  # type: ignore[union-attr]
    d.do(NoticesTaken((n.key,), ()))
    d.do(NoticesSent((("p1", n.key),), interval=60.0))
    d.do(Connect("p1", "c2"))
    d.do(Disconnect("p1", "c2"))  # gone again in its decision, 0 s later: a new notice...
    [entry] = queue(d)
    assert entry[3] == d.now + 60  # ... due only when the minute is over
    assert notices_due(d.state, d.now + 59) is None
    assert notices_due(d.state, d.now + 60) is not None


def waiting_on_bob(d: Driver) -> float:
    """Ann and the bots pass, Bob never does: the game waits on Bob from the deal."""
    d.human_play_lowest("p0")
    d.bot_moves()
    assert deciding_seats(d.state) == [1]
    since = d.state.seats[1].turn_since
    assert since is not None
    return since


def test_a_correspondence_game_that_waited_48_hours_tells_the_others_once() -> None:
    d = table("correspondence")
    since = waiting_on_bob(d)
    d.do(Disconnect("p0", "c0"))  # Ann is away too
    d.do(NoticesTaken((), tuple(e[2] for e in queue(d))))  # Bob's turn notice: done with
    assert next_deadline(d.state) == since + WAIT
    d.now = since + WAIT
    d.do(Tick())
    kinds = {(e[0], e[1]) for e in queue(d)}
    assert kinds == {("p0", "waited")}  # the stalled seat is not told it may end it
    [n] = notices_due(d.state, d.now).send  # type: ignore[union-attr]
    assert n.kind == "waited"
    d.do(NoticesTaken((), (n.key,)))
    d.now += 3600
    d.do(Tick())
    assert queue(d) == []  # once per decision
    assert next_deadline(d.state) is None


def test_a_correspondence_game_that_ends_tells_each_away_seat() -> None:
    d = table("correspondence")
    since = waiting_on_bob(d)
    d.now = since + WAIT + 1
    d.do(EndGame("p0"))  # Ann, at the table, ends it; Bob is away
    assert d.state.status == "finished"
    [entry] = queue(d)
    assert entry[:2] == ["p1", "ended"]
    [n] = notices_due(d.state, d.now).send  # type: ignore[union-attr]
    assert n.kind == "ended" and n.urgency == "low"


def test_the_outbox_is_stored_at_the_end_and_old_states_load_without_it() -> None:
    d = table("correspondence")
    again = RoomState.from_bytes(d.state.to_bytes())
    assert again.push == d.state.push and STORED_FIELDS[-1] == "push"
    import msgpack

    older = msgpack.packb(msgpack.unpackb(d.state.to_bytes(), raw=False)[:-1])
    assert RoomState.from_bytes(older).push is None
