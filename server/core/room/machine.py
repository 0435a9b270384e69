"""The room state machine: ``step(state, command, now) -> (state, events)``, pure.

No I/O and no clock of its own: ``now`` comes in with every command, every deadline is an
absolute time in the state, and timer expiry is the ``Tick`` command. The server, the store and
the scheduler drive it. A refused command raises a ``HeartsError`` (``RoomError``, or the rules
engine's ``IllegalMove``) and the input state is untouched (``step`` works on a copy).
"""

from __future__ import annotations

from dataclasses import fields
from operator import attrgetter
from typing import Any, assert_never

from protocol.cards import card_name, names_of
from server.core.rules import mask_of, points_in

from .bot_names import bot_name
from .clock_steps import ClockSteps
from .commands import (
    ALL,
    Boot,
    BotAct,
    CallRevoke,
    ChooseMoon,
    Command,
    CommitSecret,
    Connect,
    Disconnect,
    DropNode,
    EndGame,
    Event,
    FillBots,
    Join,
    Leave,
    PassCards,
    PlayCard,
    RatingsPosted,
    Rematch,
    RevealSecret,
    RoomError,
    SeatPlayers,
    ShiftClocks,
    Start,
    Tick,
)
from .game_view import names_of_seq
from .state import RoomState, Seat, TableOptions

MAX_SPECTATORS = 500


def step(state: RoomState, command: Command, now: float) -> tuple[RoomState, list[Event]]:
    """Apply ``command`` at time ``now``: the next state and the events it caused, in order."""
    run = _Step(clone(state), now)
    run.apply(command)
    run.state.seq += len(run.events)
    return run.state, run.events


def clone(state: RoomState) -> RoomState:
    """A copy that ``step`` may change freely; the input stays as it was.

    Only the game is copied whole. The seats list is copied, its seats shared: a step copies a
    seat before it changes it (``StepBase.own_seat``: a card changes two of the four). The
    spectator and departure lists are shared: a step replaces them, never changes them in
    place. Options are frozen; the shuffle is shared and copied by the step that changes it
    (``StepBase.own_shuffle``). Every object made here is work for the young collections
    (server/ops/gc_pacing.py). Field by field rather than ``copy.deepcopy``, which was an eighth of
    a node's CPU per card (py-spy).
    """
    new = RoomState(*_room_value(state))  # not dataclasses.replace: a third of clone's cost
    new.seats = state.seats.copy()
    new.game = state.game.copy() if state.game is not None else None
    return new


_room_value = attrgetter(*(f.name for f in fields(RoomState)))  # in field order


class _Step(ClockSteps):
    def apply(self, command: Command) -> None:
        # Every command of ``commands.Command``, the most frequent first.
        match command:
            case PlayCard():
                self._play_card(command)
            case PassCards():
                self._pass_cards(command)
            case BotAct():
                self._bot_act(command)
            case Tick():
                self._tick(command)
            case Connect():
                self._connect(command)
            case Disconnect():
                self._disconnect(command)
            case Join():
                self._join(command)
            case ChooseMoon():
                self._choose_moon(command)
            case CommitSecret():
                self._commit_secret(command)
            case RevealSecret():
                self._reveal_secret(command)
            case CallRevoke():
                self._call_revoke(command)
            case Boot():
                self._boot(command)
            case Leave():
                self._leave(command)
            case FillBots():
                self._fill_bots(command)
            case Start():
                self._start(command)
            case Rematch():
                self._rematch(command)
            case EndGame():
                self._end_game(command)
            case RatingsPosted():
                self._ratings_posted(command)
            case ShiftClocks():
                self._shift_clocks(command)
            case SeatPlayers():
                self._seat_players(command)
            case DropNode():
                self._drop_node(command)
            case _:
                assert_never(command)  # mypy: every command of the union has its case

    # -- seating ---------------------------------------------------------------------------

    def _join(self, c: Join) -> None:
        st = self.state
        if st.seat_of(c.player) is not None or c.player in st.spectators:
            return
        if st.kind == "friends" and st.status == "open":
            for i, seat in enumerate(st.seats):
                if seat is None:
                    st.seats[i] = Seat(
                        name=c.name, player=c.player, original=c.player, conns=[c.conn]
                    )
                    self.emit(ALL, "seated", seat=i, name=c.name, bot=False)
                    return
        if len(st.spectators) >= MAX_SPECTATORS:
            raise RoomError("room_full", "The room has as many watchers as it can take.")
        st.spectators = [*st.spectators, c.player]  # replaced, not changed: copies share it
        self.emit(ALL, "spectators", count=len(st.spectators))

    def _seat_players(self, c: SeatPlayers) -> None:
        st = self.state
        if st.status != "open" or any(st.seats):
            raise RoomError("game_in_progress", "This table is already seated.")
        for i, (player, name, level) in enumerate(c.seats):
            if player is None:
                st.seats[i] = Seat(name=name, bot=level, original=f"bot:{level}")
            else:
                st.seats[i] = Seat(name=name, player=player, original=player, away_since=self.now)
            self.emit(ALL, "seated", seat=i, name=name, bot=player is None)
        self._start_game()

    def _leave(self, c: Leave) -> None:
        st = self.state
        if c.player in st.spectators:
            st.spectators = [p for p in st.spectators if p != c.player]
            self.emit(ALL, "spectators", count=len(st.spectators))
            return
        i = self._seat(c.player)
        if st.status == "playing":
            self._replace(i, "left")
        else:
            st.seats[i] = None
            self.emit(ALL, "seat_freed", seat=i)

    def _connect(self, c: Connect) -> None:
        i = self.state.seat_of(c.player)
        if i is None:
            return
        seat = self.state.seats[i]
        assert seat is not None
        if c.conn in seat.conns:
            return
        was = seat.connected
        seat = self.own_seat(i)
        seat.conns = [*seat.conns, c.conn]  # replaced, not changed: copies share it
        seat.away_since = None
        if not was:
            self.emit(ALL, "connection", seat=i, connected=True)

    def _disconnect(self, c: Disconnect) -> None:
        st = self.state
        i = st.seat_of(c.player)
        if i is None:
            if c.player in st.spectators:
                st.spectators = [p for p in st.spectators if p != c.player]
                self.emit(ALL, "spectators", count=len(st.spectators))
            return
        seat = st.seats[i]
        assert seat is not None
        if c.conn not in seat.conns:
            return
        seat = self.own_seat(i)
        seat.conns = [conn for conn in seat.conns if conn != c.conn]  # replaced, as above
        self._went_away(i)

    def _drop_node(self, c: DropNode) -> None:
        """A node died: its connections are gone, whatever they last said."""
        prefix = c.node + "/"
        for i, seat in enumerate(self.state.seats):
            if seat is None or not any(conn.startswith(prefix) for conn in seat.conns):
                continue
            seat = self.own_seat(i)
            seat.conns = [conn for conn in seat.conns if not conn.startswith(prefix)]
            self._went_away(i)

    def _went_away(self, i: int) -> None:
        seat = self.state.seats[i]
        assert seat is not None
        if not seat.connected and not seat.is_bot:
            self.own_seat(i).away_since = self.now
            self.emit(ALL, "connection", seat=i, connected=False)

    def _fill_bots(self, c: FillBots) -> None:
        st = self.state
        self._require_host(c.player)
        if st.status != "open":
            raise RoomError("game_in_progress", "Bots can only fill seats before the game.")
        level = c.level or st.options.bot_level
        for i, seat in enumerate(st.seats):
            if seat is None:
                taken = [seat.name for seat in st.seats if seat is not None]
                name = bot_name(st.seed[0] if st.seed else 0, taken)
                st.seats[i] = Seat(name=name, bot=level, original=f"bot:{level}")
                self.emit(ALL, "seated", seat=i, name=name, bot=True, level=level)

    def _start(self, c: Start) -> None:
        self._require_host(c.player)
        if self.state.status != "open":
            raise RoomError("game_in_progress", "The game has already started.")
        if not all(self.state.seats):
            raise RoomError("not_ready", "All four seats must be filled (add bots) to start.")
        self._start_game()

    def _rematch(self, c: Rematch) -> None:
        st = self.state
        if st.kind == "friends":
            self._require_host(c.player)
        else:
            self._seat(c.player)
        if st.status != "finished":
            raise RoomError("game_not_over", "A rematch can start once the game is over.")
        for i in range(4):
            seat = self.own_seat(i)
            seat.original = seat.player or f"bot:{seat.bot}"
        st.departures = []
        st.rated_posted = False
        self._start_game()

    # -- moves -----------------------------------------------------------------------------

    def _pass_cards(self, c: PassCards) -> None:
        self._move(self._seat(c.player), "pass", c.cards, c.lag)

    def _play_card(self, c: PlayCard) -> None:
        self._move(self._seat(c.player), "play", c.card, c.lag)

    def _choose_moon(self, c: ChooseMoon) -> None:
        self._move(self._seat(c.player), "moon", c.choice, c.lag)

    def _call_revoke(self, c: CallRevoke) -> None:
        i = self._seat(c.player)
        guilty = self._game().call_revoke(i, c.accused)  # IllegalMove: the room is unchanged
        self.emit(ALL, "revoke_called", accuser=i, accused=c.accused, guilty=guilty)
        self._after_move()

    def _bot_act(self, c: BotAct) -> None:
        seat = self.state.seats[c.seat]
        if seat is None or not seat.is_bot or seat.bot_due is None or seat.bot_due > self.now:
            raise RoomError("wrong_phase", "That bot has nothing to do now.")
        if c.action not in ("pass", "play", "moon"):
            raise RoomError("bad_field", f"Unknown bot action {c.action!r}.")
        self._move(c.seat, c.action, c.value, 0.0)

    def _move(self, i: int, action: str, value: Any, lag: float) -> None:
        """A seat's decision: checked by the rules engine, charged to its clock, announced."""
        game = self._game()
        hand = game.hand
        if hand is None:
            raise RoomError("wrong_phase", "The cards are not dealt yet: the shuffle is running.")
        # The engine checks before it changes anything: an IllegalMove leaves the room as it was.
        if action == "pass":
            done = game.pass_cards(i, value)
        elif action == "play":
            winner = game.play(i, value)
        else:
            game.choose_moon(i, value)
        self._charge(i, lag)
        mover = self.own_seat(i)
        mover.turn_since = mover.bot_due = None  # this decision is made; a next one starts anew
        if action == "pass":
            self.emit(ALL, "pass_chosen", seat=i)
            self.emit(i, "passed", cards=names_of(value))
            if done:  # all four have chosen: the cards changed hands
                for s in range(4):
                    self.emit(
                        s,
                        "received",
                        cards=names_of(hand.received(s)),
                        hand=names_of(hand.hands[s]),
                    )
        elif action == "play":
            self.emit(ALL, "card_played", seat=i, card=card_name(value))
            if winner >= 0:
                t = hand.tricks[-1]
                self.emit(
                    ALL,
                    "trick_won",
                    seat=winner,
                    leader=t[0],
                    cards=names_of_seq(t[1:]),
                    points=points_in(mask_of(t[1:])),
                    number=len(hand.tricks),
                )
        else:
            self.emit(ALL, "moon_chosen", seat=i, choice=value)
        self._after_move()


def new_room(
    room_id: str,
    *,
    kind: str,
    host: str | None,
    host_name: str | None,
    options: TableOptions,
    seed: bytes,
    now: float,
) -> tuple[RoomState, list[Event]]:
    """A friends' room with its host in seat 0, or an empty quick-play table."""
    state = RoomState(id=room_id, kind=kind, host=host, options=options, seed=seed, created=now)
    events = [Event(ALL, "room_opened", {"room": room_id, "options": options.public()})]
    if host is not None and host_name is not None:
        state.seats[0] = Seat(name=host_name, player=host, original=host)
        events.append(Event(ALL, "seated", {"seat": 0, "name": host_name, "bot": False}))
    state.seq = len(events)
    return state, events
