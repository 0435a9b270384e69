"""Random command sequences through the room state machine: a step never changes the state it
was given, whether it succeeds or refuses, and every state it makes survives its own bytes.

``clone`` shares what a step usually leaves alone (the seats until ``Step.own_seat``, the
shuffle until ``own_shuffle``, the spectator and departure lists, which are replaced, never
changed): a step that changed a shared part in place would change the state it was given,
and a refused command would leave a changed room behind.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.cards import cards_in, mask_of_names
from protocol.errors import HeartsError
from protocol.shuffle import deal_context, seat_commitment
from server.core.room.commands import (
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
    FillBots,
    Join,
    Leave,
    PassCards,
    PlayCard,
    Rematch,
    RevealSecret,
    ShiftClocks,
    Start,
    Tick,
)
from server.core.room.game_view import game_view
from server.core.room.machine import step
from server.core.room.state import Clocks, RoomState
from server.core.rules import Rules
from server.core.rules.options import Revokes
from tests.support.room_driver import Driver

PLAYERS = ("p0", "p1", "p2", "p3", "p4", "p5")
CONNS = ("n1/a", "n1/b", "n2/c")
CLOCKS = Clocks(bot_think=0.5, between_hands=1.0, shuffle=5.0)


def _secret(seat: int) -> bytes:
    return bytes([seat + 1]) * 32


def _seat_moves(state: RoomState, seat: int, player: str) -> list[Command]:
    """What the seat could send now: its legal choices first, then some that are refused."""
    game = state.game
    if game is None or game.hand is None:
        return []
    view: dict[str, Any] = game_view(game, seat)
    hand = mask_of_names(view["hand"])
    moves: list[Command] = []
    if view["phase"] == "passing":
        cards = cards_in(hand)
        moves.append(PassCards(player, sum(1 << c for c in cards[:3])))
        moves.append(PassCards(player, sum(1 << c for c in cards[-2:])))  # two cards: refused
    elif view["phase"] == "playing":
        for card in cards_in(mask_of_names(view.get("legal") or [])):
            moves.append(PlayCard(player, card, lag=0.1))
        moves.extend(PlayCard(player, card) for card in cards_in(hand)[:2])
    moves.append(ChooseMoon(player, "others_26"))
    return moves


def _shuffle_moves(state: RoomState) -> list[Command]:
    sh = state.shuffle
    if sh is None or sh["dealt"] or state.game is None:
        return []
    ctx = deal_context(state.game_id, sh["hand"])
    moves: list[Command] = []
    for i, seat in enumerate(state.seats):
        if seat is None or seat.player is None or sh["kinds"][i] != "human":
            continue
        moves.append(CommitSecret(seat.player, seat_commitment(ctx, i, _secret(i))))
        moves.append(RevealSecret(seat.player, _secret(i)))
        moves.append(RevealSecret(seat.player, b"\x00" * 32))  # not the commitment's
    return moves


def _bot_moves(state: RoomState) -> list[Command]:
    game = state.game
    if game is None or game.hand is None:
        return []
    moves: list[Command] = []
    for i, seat in enumerate(state.seats):
        if seat is None or not seat.is_bot:
            continue
        view = game_view(game, i)
        if view["phase"] == "passing":
            moves.append(
                BotAct(i, "pass", sum(1 << c for c in cards_in(mask_of_names(view["hand"]))[:3]))
            )
        elif view["phase"] == "playing" and view.get("legal"):
            moves.append(BotAct(i, "play", cards_in(mask_of_names(view["legal"]))[0]))
        moves.append(BotAct(i, "moon", "shooter_minus_26"))
    return moves


def _likely(state: RoomState, now: float) -> list[Command]:
    """The moves that take the game on to its end and the next: the host's start, the seats'
    shuffle secrets, their passes and legal cards, the moon choice, the bots', a rematch."""
    if state.status == "open":
        return [FillBots("p0"), Start("p0")]
    if state.status == "finished":
        return [Rematch("p0")]
    moves: list[Command] = []
    sh = state.shuffle
    if sh is not None and not sh["dealt"] and state.game is not None:
        ctx = deal_context(state.game_id, sh["hand"])
        for i, seat in enumerate(state.seats):
            if seat is None or seat.player is None or sh["kinds"][i] != "human":
                continue
            if sh["commitments"][i] is None:
                moves.append(CommitSecret(seat.player, seat_commitment(ctx, i, _secret(i))))
            elif sh["phase"] == "reveal" and sh["secrets"][i] is None:
                moves.append(RevealSecret(seat.player, _secret(i)))
        return moves or [Tick()]
    game = state.game
    if game is None or game.hand is None:
        return [Tick()]
    for i, seat in enumerate(state.seats):
        if seat is None or (seat.is_bot and (seat.bot_due is None or seat.bot_due > now)):
            continue
        view = game_view(game, i)
        cards = cards_in(mask_of_names(view["hand"]))
        if view["phase"] == "passing" and not view["passed"]:
            three = sum(1 << c for c in cards[:3])
            moves.append(
                BotAct(i, "pass", three) if seat.is_bot else PassCards(seat.player or "", three)
            )
        elif view["phase"] == "playing" and view["turn"] == i:
            for card in cards_in(mask_of_names(view["legal"])):
                moves.append(
                    BotAct(i, "play", card) if seat.is_bot else PlayCard(seat.player or "", card)
                )
        elif view["phase"] == "moon_choice":
            moves.append(
                BotAct(i, "moon", "others_26")
                if seat.is_bot
                else ChooseMoon(seat.player or "", "others_26")
            )
    return moves or [Tick()]


@st.composite
def commands(draw: st.DrawFn, state: RoomState, now: float) -> Command:
    likely = _likely(state, now)
    if likely and draw(st.integers(0, 9)) < 7:  # mostly on with the game, to its end
        return draw(st.sampled_from(likely))
    player = draw(st.sampled_from(PLAYERS))
    conn = draw(st.sampled_from(CONNS))
    pool: list[Command] = [
        Join(player, f"Player {player}", conn=conn),
        Leave(player),
        Connect(player, conn),
        Disconnect(player, conn),
        DropNode(conn.split("/")[0]),
        FillBots(player),
        FillBots("p0"),
        Start("p0"),
        Start(player),
        Rematch(player),
        Boot(player, draw(st.integers(0, 3))),
        EndGame(player),
        CallRevoke(player, draw(st.integers(0, 3))),
        Tick(),
        ShiftClocks(outage=now, delta=draw(st.sampled_from([0.5, 30.0]))),
    ]
    for i, seat in enumerate(state.seats):
        if seat is not None and seat.player is not None:
            pool.extend(_seat_moves(state, i, seat.player))
    pool.extend(_shuffle_moves(state))
    pool.extend(_bot_moves(state))
    return draw(st.sampled_from(pool))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), revokes=st.booleans())
def test_random_commands_never_change_the_state_they_were_given(
    data: st.DataObject, revokes: bool
) -> None:
    d = Driver(rules=Rules(revokes=Revokes.ALLOWED if revokes else Revokes.BLOCKED), clocks=CLOCKS)
    for _ in range(data.draw(st.integers(30, 600), label="steps")):
        command = data.draw(commands(d.state, d.now), label="command")
        old = d.state
        before = old.to_bytes()
        try:
            new, events = step(old, command, d.now)
        except HeartsError:
            assert old.to_bytes() == before, f"a refused {command!r} changed the room"
        else:
            assert old.to_bytes() == before, f"{command!r} changed the state it was given"
            data_new = new.to_bytes()
            assert RoomState.from_bytes(data_new).to_bytes() == data_new
            assert new.seq == old.seq + len(events)
            d.state = new
        d.now += data.draw(st.sampled_from([0.0, 0.3, 2.0, 31.0, 400.0]), label="wait")
