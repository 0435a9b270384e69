"""The room state machine: ``step(state, command, now) -> (state, events)``, pure.

No I/O and no clock of its own: ``now`` comes in with every command, every deadline is an
absolute time in the state, and timer expiry is the ``Tick`` command. The server, the store and
the scheduler drive it. A refused command raises ``RoomError`` and the input state is untouched
(``step`` works on a copy).
"""

from __future__ import annotations

from dataclasses import fields
from operator import attrgetter
from typing import Any

from protocol.cards import card_name, names_of
from server.rules import Game, IllegalMove, Phase, mask_of, points_in

from .bot_names import bot_name
from .clocks import clock_boots, connected_humans, deciding_seats, grace_period
from .commands import (
    ALL,
    Boot,
    BotAct,
    CallRevoke,
    ChooseMoon,
    Command,
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
    RoomError,
    SeatPlayers,
    ShiftClocks,
    Start,
    Tick,
)
from .game_view import DIRECTION_NAMES, names_of_seq, trick_record
from .shuffle_steps import ShuffleSteps
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
    (server/collector.py). Field by field rather than ``copy.deepcopy``, which was an eighth of
    a node's CPU per card (py-spy).
    """
    new = RoomState(*_room_value(state))  # not dataclasses.replace: a third of clone's cost
    new.seats = state.seats.copy()
    new.game = state.game.copy() if state.game is not None else None
    return new


_room_value = attrgetter(*(f.name for f in fields(RoomState)))  # in field order


class _Step(ShuffleSteps):
    def apply(self, command: Command) -> None:
        handler = getattr(self, "_" + type(command).__name__)
        handler(command)

    # -- seating ---------------------------------------------------------------------------

    def _Join(self, c: Join) -> None:
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

    def _SeatPlayers(self, c: SeatPlayers) -> None:
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

    def _Leave(self, c: Leave) -> None:
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

    def _Connect(self, c: Connect) -> None:
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

    def _Disconnect(self, c: Disconnect) -> None:
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

    def _DropNode(self, c: DropNode) -> None:
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

    def _FillBots(self, c: FillBots) -> None:
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

    def _Start(self, c: Start) -> None:
        self._require_host(c.player)
        if self.state.status != "open":
            raise RoomError("game_in_progress", "The game has already started.")
        if not all(self.state.seats):
            raise RoomError("not_ready", "All four seats must be filled (add bots) to start.")
        self._start_game()

    def _Rematch(self, c: Rematch) -> None:
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

    def _PassCards(self, c: PassCards) -> None:
        self._move(self._seat(c.player), "pass", c.cards, c.lag)

    def _PlayCard(self, c: PlayCard) -> None:
        self._move(self._seat(c.player), "play", c.card, c.lag)

    def _ChooseMoon(self, c: ChooseMoon) -> None:
        self._move(self._seat(c.player), "moon", c.choice, c.lag)

    def _CallRevoke(self, c: CallRevoke) -> None:
        i = self._seat(c.player)
        try:
            guilty = self._game().call_revoke(i, c.accused)
        except IllegalMove as e:
            raise RoomError(e.code, e.message) from None
        self.emit(ALL, "revoke_called", accuser=i, accused=c.accused, guilty=guilty)
        self._after_move()

    def _BotAct(self, c: BotAct) -> None:
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
        try:
            if action == "pass":
                done = game.pass_cards(i, value)
            elif action == "play":
                winner = game.play(i, value)
            else:
                game.choose_moon(i, value)
        except IllegalMove as e:
            raise RoomError(e.code, e.message) from None
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

    def _EndGame(self, c: EndGame) -> None:
        st = self.state
        i = self._seat(c.player)
        wait = st.options.clocks.correspondence_wait
        stalled = [
            j
            for j in deciding_seats(st)
            if (seat := st.seats[j]) is not None
            and not seat.is_bot
            and seat.turn_since is not None
            and self.now - seat.turn_since > wait
        ]
        if st.options.pace != "correspondence" or not stalled or i in stalled:
            raise RoomError(
                "cannot_end_game",
                f"A correspondence game can be ended only after waiting {wait / 3600:g} hours "
                "on another seat.",
            )
        game = self._game()
        winners = game.end_without(stalled)
        st.status = "finished"
        for j in range(4):
            self._off_turn(j)
        self.emit(ALL, "game_ended", by=i, waited_on=stalled)
        self.emit(
            ALL,
            "game_over",
            scores=game.scores.copy(),
            winners=winners,
            departures=st.departures.copy(),
        )

    def _RatingsPosted(self, c: RatingsPosted) -> None:
        st = self.state
        if st.rated_posted or st.rating_due is None:
            return
        if c.changes is None:
            st.rating_due = c.retry_at
            return
        st.rated_posted = True
        st.rating_due = None
        self.emit(ALL, "ratings", game=st.game_id, seats=list(c.changes))

    def _ShiftClocks(self, c: ShiftClocks) -> None:
        st = self.state
        if st.outage_seen >= c.outage:
            return
        st.outage_seen = c.outage
        d = c.delta
        if st.next_hand_at is not None:
            st.next_hand_at += d
        if st.shuffle is not None:
            self.own_shuffle()["deadline"] += d
        for i, seat in enumerate(st.seats):
            if seat is None:
                continue
            seat = self.own_seat(i)
            # Every time a clock is measured from moves on, so nobody pays for the outage.
            for name in ("turn_since", "out_of_time_at", "away_since", "bot_due"):
                value = getattr(seat, name)
                if value is not None:
                    setattr(seat, name, value + d)
        self.emit(ALL, "clocks_shifted", by=d)

    def _Boot(self, c: Boot) -> None:
        st = self.state
        booter = self._seat(c.player)
        target = st.seats[c.seat]
        if st.status != "playing" or booter == c.seat or target is None or target.is_bot:
            raise RoomError("not_bootable", "That seat cannot be booted.")
        clocks = st.options.clocks
        out = target.out_of_time_at is not None
        gone = target.away_since is not None and self.now >= target.away_since + clocks.reconnect
        if not (out or gone):
            raise RoomError(
                "not_bootable",
                "A seat can be booted only when its time bank is out "
                "or it has been disconnected past its reconnect grace.",
            )
        self._replace(c.seat, "booted", by=booter)

    def _Tick(self, c: Tick) -> None:
        st = self.state
        now = self.now
        sh = st.shuffle
        if sh is not None and not sh["dealt"] and now >= sh["deadline"]:
            # Seats that did not commit or reveal in time get the stand-in secret.
            # Past the commit deadline only those who did not commit are out; the others get
            # the whole reveal window that opens now.
            sh = self.own_shuffle()
            missing = "commitments" if sh["phase"] == "commit" else "secrets"
            for j in range(4):
                if sh["kinds"][j] == "human" and sh[missing][j] is None:
                    sh["kinds"][j] = "absent"
                    self._missed_shuffle(j)
            self._shuffle_progress()
        self._try_deal()
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
            moon = self._game().phase is Phase.MOON_CHOICE
            if seat.out_of_time_at is None and bank_out and (moon or clock_boots(st, i)):
                seat = self.own_seat(i)
                seat.bank = 0.0
                seat.out_of_time_at = now
                if moon:
                    # No answer picks others_26 (RULES.md); the seat is then out of time.
                    self._game().choose_moon(i, "others_26")
                    self.emit(ALL, "moon_chosen", seat=i, choice="others_26", timeout=True)
                    self._after_move()
                    continue
                self.emit(ALL, "out_of_time", seat=i, auto_boot_at=now + clocks.boot_window)
                if not seat.connected or not others:
                    self._replace(i, "silent")
                    continue
            if (
                seat.out_of_time_at is not None
                and now >= seat.out_of_time_at + clocks.boot_window
                and clock_boots(st, i)
            ):
                self._replace(i, "silent")
                continue
            if (
                seat.away_since is not None
                and now >= seat.away_since + clocks.reconnect
                and not others
            ):
                self._replace(i, "silent")

    def _start_game(self) -> None:
        st = self.state
        st.game_number += 1
        st.game = Game(st.options.rules)
        st.status = "playing"
        self.emit(
            ALL, "game_started", game=st.game_id, number=st.game_number, options=st.options.public()
        )
        self._prepare_hand(0.0)

    def _after_move(self) -> None:
        st = self.state
        game = self._game()
        if game.phase is Phase.DEAL or game.phase is Phase.OVER:
            hand = game.hand
            assert hand is not None
            points = game.history[-1]
            entry = {
                "hand": game.hand_number,
                "points": points,
                "scores": game.scores.copy(),
                "shooter": hand.shooter(),
                "pass_direction": DIRECTION_NAMES[hand.direction],
                "tricks": [trick_record(t) for t in hand.tricks],
                "revoke_call": list(hand.revoke_call) if hand.revoke_call else None,
            }
            self.emit(ALL, "hand_over", **entry)
            self._publish_audit()
            for i in range(4):
                self._off_turn(i)
            if game.phase is Phase.OVER:
                st.status = "finished"
                if st.options.rated and st.options.rules.standard and not st.rated_posted:
                    st.rating_due = self.now  # posted by the shell, exactly once, any node
                self.emit(
                    ALL,
                    "game_over",
                    scores=game.scores.copy(),
                    winners=game.winners.copy(),
                    departures=st.departures.copy(),
                )
                return
            self._prepare_hand(st.options.clocks.between_hands)
            return
        self._update_turns()

    def _replace(self, i: int, reason: str, by: int | None = None) -> None:
        """A bot takes the seat at once and plays it to the end; the player never returns."""
        st = self.state
        seat = st.seats[i]
        assert seat is not None and seat.player is not None
        departure = {
            "seat": i,
            "player": seat.player,
            "reason": reason,
            "at": self.now,
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
        self.emit(ALL, "replaced", seat=i, reason=reason, by=by, name=st.seats[i].name, level=level)  # type: ignore[union-attr]
        if i in deciding_seats(st):
            st.seats[i].bot_due = self.now + st.options.clocks.bot_think  # type: ignore[union-attr]
        sh = st.shuffle
        if (
            sh is not None
            and not sh["dealt"]
            and sh["kinds"][i] == "human"
            and sh["secrets"][i] is None
        ):
            # The player is gone before revealing: a committed seat is absent, else a bot's.
            sh = self.own_shuffle()
            sh["kinds"][i] = "absent" if sh["commitments"][i] else "bot"
            self._shuffle_progress()


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
