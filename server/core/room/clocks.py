"""The room's clocks read from its state: who is deciding, each seat's clock, the next deadline.

Pure queries of a ``RoomState``; the step (``server.core.room.machine``) changes the clocks, the
shell schedules ``next_deadline``.
"""

from __future__ import annotations

from typing import Any

from server.core.rules import Phase

from .state import RoomState


def next_deadline(state: RoomState) -> float | None:
    """The soonest time at which a ``Tick`` (or a bot's move) has something to do."""
    times: list[float] = []
    if state.next_hand_at is not None:
        times.append(state.next_hand_at)
    if state.shuffle is not None and not state.shuffle["dealt"]:
        times.append(state.shuffle["deadline"])
    if state.archive_due is not None and state.unarchived:
        times.append(state.archive_due)
    if state.push is not None and state.push["q"]:  # the push outbox (notices.py)
        times.append(min(e[3] for e in state.push["q"]))
    if state.status != "playing":
        # Clocks run only in a game: a finished room with a vanished player must not be due.
        return min(times) if times else None
    clocks = state.options.clocks
    live = state.options.pace == "live"
    if not live and (waited := waited_deadline(state)) is not None:
        times.append(waited)
    humans_present: set[int] | None = None  # read only for a seat that is away (rare)
    for i, seat in enumerate(state.seats):
        if seat is None:
            continue
        if seat.bot_due is not None:
            times.append(seat.bot_due)
        if seat.is_bot or not live:
            continue
        if seat.out_of_time_at is not None:
            if clock_boots(state, i):
                times.append(seat.out_of_time_at + clocks.boot_window)
        elif seat.turn_since is not None and (
            clock_boots(state, i)
            or (state.game is not None and state.game.phase is Phase.MOON_CHOICE)
        ):
            times.append(seat.turn_since + grace_period(state) + seat.bank + clocks.lag_cap)
        if seat.away_since is not None:
            if humans_present is None:
                humans_present = connected_humans(state)
            if not (humans_present - {i}):
                times.append(seat.away_since + clocks.reconnect)
    return min(times) if times else None


def waited_deadline(state: RoomState) -> float | None:
    """When a correspondence game will have waited long enough on a seat to tell the others
    they may end it (``notices.notice_waited``; each decision is announced once)."""
    wait = state.options.clocks.correspondence_wait
    announced = state.push["w"] if state.push else ()
    times = [
        s.turn_since + wait
        for i in deciding_seats(state)
        if (s := state.seats[i]) is not None
        and not s.is_bot
        and s.turn_since is not None
        and f"{i}:{s.turn_since}" not in announced
    ]
    return min(times) if times else None


def deciding_seats(state: RoomState) -> list[int]:
    game = state.game
    if game is None or state.status != "playing":
        return []
    phase = game.phase
    if phase is Phase.PASSING:
        return [s for s in range(4) if not game.hand.passes[s]]  # type: ignore[union-attr]
    if phase is Phase.PLAYING:
        return [game.hand.turn]  # type: ignore[union-attr]
    if phase is Phase.MOON_CHOICE:
        return [game.moon_chooser]
    return []


def clock_of(state: RoomState, seat_index: int) -> dict[str, Any] | None:
    """What a client needs to draw a seat's clock (absolute times on the server's clock)."""
    seat = state.seats[seat_index]
    if seat is None or seat.is_bot or seat.turn_since is None:
        return None
    grace = grace_period(state)
    return {
        "seat": seat_index,
        "since": seat.turn_since,
        "grace_until": seat.turn_since + grace,
        "bank": seat.bank,
        "bank_out_at": seat.turn_since + grace + seat.bank,
        "out_of_time_at": seat.out_of_time_at,
    }


def grace_period(state: RoomState) -> float:
    clocks = state.options.clocks
    phase = state.game.phase if state.game is not None else None
    return clocks.grace_play if phase is Phase.PLAYING else clocks.grace_pass


def clock_boots(state: RoomState, i: int) -> bool:
    """Whether running out of time can cost seat ``i`` its seat: at a table where no other
    human sat down, only if the host turned the clock on (a game alone with bots is casual).
    A table that had other humans keeps its clock after they are replaced by bots."""
    others = (s for k, s in enumerate(state.seats) if k != i and s is not None)
    return state.options.solo_clock or any(
        not s.is_bot or not (s.original or "bot:").startswith("bot:") for s in others
    )


def connected_humans(state: RoomState) -> set[int]:
    return {i for i, s in enumerate(state.seats) if s is not None and not s.is_bot and s.connected}
