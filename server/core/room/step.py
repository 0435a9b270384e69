"""A step in progress: its state, its time, the events it emits, and the helpers every part of
the room's rules uses.

Each part is a module of plain functions taking the ``Step``: seating and moves
(``machine``), the commit-reveal shuffle (``shuffle_steps``), a game's start and end
(``game_steps``), and the clocks (``clock_steps``); ``machine.step`` makes the ``Step`` and
dispatches a command to its function.
"""

from __future__ import annotations

from typing import Any

from protocol.cards import names_of
from server.core.rules import Game, Phase

from .clocks import clock_of, deciding_seats, grace_period
from .commands import ALL, Event, RoomError
from .notices import notice
from .state import RoomState, Seat


class Step:
    """The room being stepped (a copy: see ``machine.clone``) at ``now``, and its events."""

    def __init__(self, state: RoomState, now: float) -> None:
        self.state = state
        self.now = now
        self.events: list[Event] = []
        # ``clone`` shares the shuffle with the input state (most steps leave it as it is).
        self.shuffle_owned = False
        # ... and its seats: these are the input's, to be copied before any change.
        self.shared_seats = tuple(state.seats)

    def emit(self, audience: int, kind: str, **data: Any) -> None:
        self.events.append(Event(audience, kind, data))

    def own_shuffle(self) -> dict[str, Any]:
        """The shuffle, as this step's own copy: called before any change to it."""
        sh = self.state.shuffle
        assert sh is not None
        if not self.shuffle_owned:
            sh = self.state.shuffle = {
                k: v.copy() if isinstance(v, list) else v for k, v in sh.items()
            }
            self.shuffle_owned = True
        return sh

    def own_seat(self, i: int) -> Seat:
        """Seat ``i``, as this step's own copy: called before any change to it."""
        seat = self.state.seats[i]
        assert seat is not None
        if seat is self.shared_seats[i]:
            seat = self.state.seats[i] = seat.copy()
        return seat

    def off_turn(self, i: int) -> None:
        """Seat ``i`` has no decision to make (its clock and its bot stop)."""
        seat = self.state.seats[i]
        assert seat is not None
        if seat.turn_since is not None or seat.bot_due is not None:
            seat = self.own_seat(i)
            seat.turn_since = seat.bot_due = None

    def seat_index(self, player: str) -> int:
        i = self.state.seat_of(player)
        if i is None:
            raise RoomError("not_seated", "Only a seated player can do that.")
        return i

    def game(self) -> Game:
        if self.state.game is None or self.state.status != "playing":
            raise RoomError("wrong_phase", "No game is being played at this table.")
        return self.state.game

    def require_host(self, player: str) -> None:
        if self.state.host != player:
            raise RoomError("not_host", "Only the host can do that.")

    def charge(self, i: int, lag: float) -> None:
        """Bank used = time taken past the grace, less a small capped lag credit."""
        seat = self.state.seats[i]
        assert seat is not None
        since = seat.turn_since
        if seat.is_bot or since is None:
            return
        seat = self.own_seat(i)
        seat.out_of_time_at = None  # it answered: no longer bootable for this decision
        credit = min(max(lag, 0.0), self.state.options.clocks.lag_cap)
        used = self.now - since - grace_period(self.state) - credit
        if used > 0:
            seat.bank = max(0.0, seat.bank - used)

    def update_turns(self) -> None:
        """Start the clock (or the bot) of every seat that now has a decision to make."""
        st = self.state
        deciding = set(deciding_seats(st))
        think = st.options.clocks.bot_think
        game = st.game
        for i, seat in enumerate(st.seats):
            assert seat is not None
            if i not in deciding:
                self.off_turn(i)
                continue
            if seat.turn_since is not None or seat.bot_due is not None:
                continue  # still on the same decision (the pass: each seat on its own clock)
            seat = self.own_seat(i)
            if seat.is_bot:
                seat.bot_due = self.now + think
            else:
                seat.turn_since = self.now
                if not seat.conns:
                    notice(self, i, "turn")  # away: the push outbox (notices.py)
            assert game is not None
            prompt: dict[str, Any] = {
                "seat": i,
                "phase": game.phase.value,
                "clock": clock_of(st, i),
            }
            self.emit(ALL, "turn", **prompt)
            if game.phase is Phase.PLAYING:
                self.emit(i, "your_turn", legal=names_of(game.legal_plays(i)), **prompt)
            elif game.phase is Phase.PASSING:
                self.emit(i, "your_turn", legal=names_of(game.hand.hands[i]), **prompt)  # type: ignore[union-attr]
            else:
                self.emit(
                    i, "your_turn", legal=[], choices=["others_26", "shooter_minus_26"], **prompt
                )
