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
from .clock_steps import boot, replace, shift_clocks, tick
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
    GamesArchived,
    Join,
    Leave,
    NoticesSent,
    NoticesTaken,
    PassCards,
    PlayCard,
    Rematch,
    RevealSecret,
    RoomError,
    SeatPlayers,
    ShiftClocks,
    Start,
    Tick,
)
from .game_steps import after_move, end_game, games_archived, start_game
from .game_view import names_of_seq
from .notices import notice, notices_sent, notices_taken
from .shuffle_steps import commit_secret, reveal_secret
from .state import RoomState, Seat, TableOptions
from .step import Step

MAX_SPECTATORS = 500


def step(state: RoomState, command: Command, now: float) -> tuple[RoomState, list[Event]]:
    """Apply ``command`` at time ``now``: the next state and the events it caused, in order."""
    run = Step(clone(state), now)
    _dispatch(run, command)
    run.state.seq += len(run.events)
    return run.state, run.events


def clone(state: RoomState) -> RoomState:
    """A copy that ``step`` may change freely; the input stays as it was.

    Only the game is copied whole. The seats list is copied, its seats shared: a step copies a
    seat before it changes it (``Step.own_seat``: a card changes two of the four). The
    spectator, departure and unarchived lists are shared: a step replaces them, never changes
    them in place. Options are frozen; the shuffle is shared and copied by the step that changes it
    (``Step.own_shuffle``). Every object made here is work for the young collections
    (server/ops/gc_pacing.py). Field by field, because ``copy.deepcopy`` and
    ``dataclasses.replace`` cost a card far more (docs/benchmarks.md).
    """
    new = RoomState(*_room_value(state))
    new.seats = state.seats.copy()
    new.game = state.game.copy() if state.game is not None else None
    return new


_room_value = attrgetter(*(f.name for f in fields(RoomState)))  # in field order


def _dispatch(run: Step, command: Command) -> None:
    """The command's function; every command of ``commands.Command``, the most frequent first."""
    match command:
        case PlayCard():
            play_card(run, command)
        case PassCards():
            pass_cards(run, command)
        case BotAct():
            bot_act(run, command)
        case Tick():
            tick(run, command)
        case Connect():
            connect(run, command)
        case Disconnect():
            disconnect(run, command)
        case Join():
            join(run, command)
        case ChooseMoon():
            choose_moon(run, command)
        case CommitSecret():
            commit_secret(run, command)
        case RevealSecret():
            reveal_secret(run, command)
        case CallRevoke():
            call_revoke(run, command)
        case Boot():
            boot(run, command)
        case Leave():
            leave(run, command)
        case FillBots():
            fill_bots(run, command)
        case Start():
            start(run, command)
        case Rematch():
            rematch(run, command)
        case EndGame():
            end_game(run, command)
        case GamesArchived():
            games_archived(run, command)
        case ShiftClocks():
            shift_clocks(run, command)
        case SeatPlayers():
            seat_players(run, command)
        case DropNode():
            drop_node(run, command)
        case NoticesTaken():
            notices_taken(run, command.keys, command.drop, command.retry)
        case NoticesSent():
            notices_sent(run, command.done, command.interval)
        case _:
            assert_never(command)  # mypy: every command of the union has its case


# -- seating ---------------------------------------------------------------------------


def join(run: Step, c: Join) -> None:
    st = run.state
    if st.seat_of(c.player) is not None or c.player in st.spectators:
        return
    if st.kind == "friends" and st.status == "open":
        for i, seat in enumerate(st.seats):
            if seat is None:
                st.seats[i] = Seat(name=c.name, player=c.player, original=c.player, conns=[c.conn])
                run.emit(ALL, "seated", seat=i, name=c.name, bot=False)
                return
    if len(st.spectators) >= MAX_SPECTATORS:
        raise RoomError("room_full", "The room has as many watchers as it can take.")
    st.spectators = [*st.spectators, c.player]  # replaced, not changed: copies share it
    run.emit(ALL, "spectators", count=len(st.spectators))


def seat_players(run: Step, c: SeatPlayers) -> None:
    st = run.state
    if st.status != "open" or any(st.seats):
        raise RoomError("game_in_progress", "This table is already seated.")
    for i, (player, name, level) in enumerate(c.seats):
        if player is None:
            st.seats[i] = Seat(name=name, bot=level, original=f"bot:{level}")
        else:
            st.seats[i] = Seat(name=name, player=player, original=player, away_since=run.now)
        run.emit(ALL, "seated", seat=i, name=name, bot=player is None)
    start_game(run)


def leave(run: Step, c: Leave) -> None:
    st = run.state
    if c.player in st.spectators:
        st.spectators = [p for p in st.spectators if p != c.player]
        run.emit(ALL, "spectators", count=len(st.spectators))
        return
    i = run.seat_index(c.player)
    if st.status == "playing":
        replace(run, i, "left")
    else:
        st.seats[i] = None
        run.emit(ALL, "seat_freed", seat=i)


def connect(run: Step, c: Connect) -> None:
    i = run.state.seat_of(c.player)
    if i is None:
        return
    seat = run.state.seats[i]
    assert seat is not None
    if c.conn in seat.conns:
        return
    was = seat.connected
    seat = run.own_seat(i)
    seat.conns = [*seat.conns, c.conn]  # replaced, not changed: copies share it
    seat.away_since = None
    if not was:
        run.emit(ALL, "connection", seat=i, connected=True)


def disconnect(run: Step, c: Disconnect) -> None:
    st = run.state
    i = st.seat_of(c.player)
    if i is None:
        if c.player in st.spectators:
            st.spectators = [p for p in st.spectators if p != c.player]
            run.emit(ALL, "spectators", count=len(st.spectators))
        return
    seat = st.seats[i]
    assert seat is not None
    if c.conn not in seat.conns:
        return
    seat = run.own_seat(i)
    seat.conns = [conn for conn in seat.conns if conn != c.conn]  # replaced, as above
    _went_away(run, i)


def drop_node(run: Step, c: DropNode) -> None:
    """A node died: its connections are gone, whatever they last said."""
    prefix = c.node + "/"
    for i, seat in enumerate(run.state.seats):
        if seat is None or not any(conn.startswith(prefix) for conn in seat.conns):
            continue
        seat = run.own_seat(i)
        seat.conns = [conn for conn in seat.conns if not conn.startswith(prefix)]
        _went_away(run, i)


def _went_away(run: Step, i: int) -> None:
    seat = run.state.seats[i]
    assert seat is not None
    if not seat.connected and not seat.is_bot:
        run.own_seat(i).away_since = run.now
        run.emit(ALL, "connection", seat=i, connected=False)
        if seat.turn_since is not None and run.state.status == "playing":
            notice(run, i, "turn")  # gone during its decision (a phone's screen went off)


def fill_bots(run: Step, c: FillBots) -> None:
    st = run.state
    run.require_host(c.player)
    if st.status != "open":
        raise RoomError("game_in_progress", "Bots can only fill seats before the game.")
    level = c.level or st.options.bot_level
    for i, seat in enumerate(st.seats):
        if seat is None:
            taken = [seat.name for seat in st.seats if seat is not None]
            name = bot_name(st.seed[0] if st.seed else 0, taken)
            st.seats[i] = Seat(name=name, bot=level, original=f"bot:{level}")
            run.emit(ALL, "seated", seat=i, name=name, bot=True, level=level)


def start(run: Step, c: Start) -> None:
    run.require_host(c.player)
    if run.state.status != "open":
        raise RoomError("game_in_progress", "The game has already started.")
    if not all(run.state.seats):
        raise RoomError("not_ready", "All four seats must be filled (add bots) to start.")
    start_game(run)


def rematch(run: Step, c: Rematch) -> None:
    st = run.state
    if st.kind == "friends":
        run.require_host(c.player)
    else:
        run.seat_index(c.player)
    if st.status != "finished":
        raise RoomError("game_not_over", "A rematch can start once the game is over.")
    for i in range(4):
        seat = run.own_seat(i)
        seat.original = seat.player or f"bot:{seat.bot}"
    st.departures = []
    start_game(run)


# -- moves -----------------------------------------------------------------------------


def pass_cards(run: Step, c: PassCards) -> None:
    _move(run, run.seat_index(c.player), "pass", c.cards, c.lag)


def play_card(run: Step, c: PlayCard) -> None:
    _move(run, run.seat_index(c.player), "play", c.card, c.lag)


def choose_moon(run: Step, c: ChooseMoon) -> None:
    _move(run, run.seat_index(c.player), "moon", c.choice, c.lag)


def call_revoke(run: Step, c: CallRevoke) -> None:
    i = run.seat_index(c.player)
    guilty = run.game().call_revoke(i, c.accused)  # IllegalMove: the room is unchanged
    run.emit(ALL, "revoke_called", accuser=i, accused=c.accused, guilty=guilty)
    after_move(run)


def bot_act(run: Step, c: BotAct) -> None:
    seat = run.state.seats[c.seat]
    if seat is None or not seat.is_bot or seat.bot_due is None or seat.bot_due > run.now:
        raise RoomError("wrong_phase", "That bot has nothing to do now.")
    if c.action not in ("pass", "play", "moon"):
        raise RoomError("bad_field", f"Unknown bot action {c.action!r}.")
    _move(run, c.seat, c.action, c.value, 0.0)


def _move(run: Step, i: int, action: str, value: Any, lag: float) -> None:
    """A seat's decision: checked by the rules engine, charged to its clock, announced."""
    game = run.game()
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
    run.charge(i, lag)
    mover = run.own_seat(i)
    mover.turn_since = mover.bot_due = None  # this decision is made; a next one starts anew
    if action == "pass":
        run.emit(ALL, "pass_chosen", seat=i)
        run.emit(i, "passed", cards=names_of(value))
        if done:  # all four have chosen: the cards changed hands
            for s in range(4):
                run.emit(
                    s,
                    "received",
                    cards=names_of(hand.received(s)),
                    hand=names_of(hand.hands[s]),
                )
    elif action == "play":
        run.emit(ALL, "card_played", seat=i, card=card_name(value))
        if winner >= 0:
            t = hand.tricks[-1]
            run.emit(
                ALL,
                "trick_won",
                seat=winner,
                leader=t[0],
                cards=names_of_seq(t[1:]),
                points=points_in(mask_of(t[1:])),
                number=len(hand.tricks),
            )
    else:
        run.emit(ALL, "moon_chosen", seat=i, choice=value)
    after_move(run)


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
