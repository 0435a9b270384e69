"""The clocks' part of a room step: timers running out (``Tick``), booting an idle seat, a bot
taking a seat for good, and clocks moved on past a store outage."""

from __future__ import annotations

from server.core.rules import Phase

from .clocks import clock_boots, connected_humans, deciding_seats, grace_period
from .commands import ALL, Boot, RoomError, ShiftClocks, Tick
from .game_steps import after_move
from .notices import notice_waited
from .shuffle_steps import missed_shuffle, shuffle_progress, try_deal
from .state import Seat
from .step import Step


def shift_clocks(run: Step, c: ShiftClocks) -> None:
    st = run.state
    if st.outage_seen >= c.outage:
        return
    st.outage_seen = c.outage
    d = c.delta
    if st.next_hand_at is not None:
        st.next_hand_at += d
    if st.shuffle is not None:
        run.own_shuffle()["deadline"] += d
    for i, seat in enumerate(st.seats):
        if seat is None:
            continue
        seat = run.own_seat(i)
        # Every time a clock is measured from moves on, so nobody pays for the outage.
        for name in ("turn_since", "out_of_time_at", "away_since", "bot_due"):
            value = getattr(seat, name)
            if value is not None:
                setattr(seat, name, value + d)
    run.emit(ALL, "clocks_shifted", by=d)


def boot(run: Step, c: Boot) -> None:
    st = run.state
    booter = run.seat_index(c.player)
    target = st.seats[c.seat]
    if st.status != "playing" or booter == c.seat or target is None or target.is_bot:
        raise RoomError("not_bootable", "That seat cannot be booted.")
    clocks = st.options.clocks
    out = target.out_of_time_at is not None
    gone = target.away_since is not None and run.now >= target.away_since + clocks.reconnect
    if not (out or gone):
        raise RoomError(
            "not_bootable",
            "A seat can be booted only when its time bank is out "
            "or it has been disconnected past its reconnect grace.",
        )
    replace(run, c.seat, "booted", by=booter)


def tick(run: Step, c: Tick) -> None:
    st = run.state
    now = run.now
    sh = st.shuffle
    if sh is not None and not sh["dealt"] and now >= sh["deadline"]:
        # Seats that did not commit or reveal in time get the stand-in secret.
        # Past the commit deadline only those who did not commit are out; the others get
        # the whole reveal window that opens now.
        sh = run.own_shuffle()
        missing = "commitments" if sh["phase"] == "commit" else "secrets"
        for j in range(4):
            if sh["kinds"][j] == "human" and sh[missing][j] is None:
                sh["kinds"][j] = "absent"
                missed_shuffle(run, j)
        shuffle_progress(run)
    try_deal(run)
    if st.status == "playing" and st.options.pace == "correspondence":
        notice_waited(run)  # 48 hours on one seat: the others may end the game
    if st.status != "playing" or st.options.pace != "live":
        return
    clocks = st.options.clocks
    grace = grace_period(st)
    for i, seat in enumerate(st.seats):
        if seat is None or seat.is_bot:
            continue
        others = connected_humans(st) - {i}
        bank_out = (
            seat.turn_since is not None
            and now >= seat.turn_since + grace + seat.bank + clocks.lag_cap
        )
        # The moon choice always has its deadline; otherwise a clock that boots nobody
        # (a player alone with bots) never runs out.
        moon = run.game().phase is Phase.MOON_CHOICE
        if seat.out_of_time_at is None and bank_out and (moon or clock_boots(st, i)):
            seat = run.own_seat(i)
            seat.bank = 0.0
            seat.out_of_time_at = now
            if moon:
                # No answer picks others_26 (docs/rules.md); the seat is then out of time.
                run.game().choose_moon(i, "others_26")
                run.emit(ALL, "moon_chosen", seat=i, choice="others_26", timeout=True)
                after_move(run)
                continue
            run.emit(ALL, "out_of_time", seat=i, auto_boot_at=now + clocks.boot_window)
            if not seat.connected or not others:
                replace(run, i, "silent")
                continue
        if (
            seat.out_of_time_at is not None
            and now >= seat.out_of_time_at + clocks.boot_window
            and clock_boots(st, i)
        ):
            replace(run, i, "silent")
            continue
        if seat.away_since is not None and now >= seat.away_since + clocks.reconnect and not others:
            replace(run, i, "silent")


def replace(run: Step, i: int, reason: str, by: int | None = None) -> None:
    """A bot takes the seat at once and plays it to the end; the player never returns."""
    st = run.state
    seat = st.seats[i]
    assert seat is not None and seat.player is not None
    departure = {
        "seat": i,
        "player": seat.player,
        "reason": reason,
        "at": run.now,
        "hand": st.game.hand_number if st.game else 0,
    }
    st.departures = [*st.departures, departure]  # replaced, not changed: copies share it
    level = st.options.bot_level
    st.seats[i] = Seat(
        name=f"{seat.name} (bot)",
        bot=level,
        original=seat.original,
        bank=seat.bank,
    )
    run.emit(ALL, "replaced", seat=i, reason=reason, by=by, name=st.seats[i].name, level=level)  # type: ignore[union-attr]
    if i in deciding_seats(st):
        st.seats[i].bot_due = run.now + st.options.clocks.bot_think  # type: ignore[union-attr]
    sh = st.shuffle
    if (
        sh is not None
        and not sh["dealt"]
        and sh["kinds"][i] == "human"
        and sh["secrets"][i] is None
    ):
        # The player is gone before revealing: a committed seat is absent, else a bot's.
        sh = run.own_shuffle()
        sh["kinds"][i] = "absent" if sh["commitments"][i] else "bot"
        shuffle_progress(run)
