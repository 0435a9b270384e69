"""``room_view(state, seat)``: the only way a room's state leaves the server.

A seat sees its own cards; a spectator (``seat=None``) sees public facts only. Events go through
the same audience rule (``visible``). Nobody ever sees another seat's cards or a shuffle secret.
"""

from __future__ import annotations

from typing import Any

from protocol.shuffle import server_commitment

from .clocks import clock_of, deciding_seats
from .commands import ALL, Event
from .dealing import hand_context, server_secret
from .game_view import game_view
from .state import RoomState


def visible(event_audience: int, seat: int | None) -> bool:
    return event_audience == ALL or (seat is not None and event_audience == seat)


def seats_view(state: RoomState) -> list[dict[str, Any] | None]:
    out: list[dict[str, Any] | None] = []
    for i, seat in enumerate(state.seats):
        if seat is None:
            out.append(None)
            continue
        out.append(
            {
                "seat": i,
                "name": seat.name,
                "bot": seat.is_bot,
                "level": seat.bot,
                "connected": seat.connected or seat.is_bot,
                "away_since": seat.away_since,
                "out_of_time": seat.out_of_time_at is not None,
                "clock": clock_of(state, i),
            }
        )
    return out


def room_view(
    state: RoomState,
    seat: int | None,
    player: str | None = None,
    hand_log: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """What ``seat`` (None: a spectator) may see; ``hand_log`` is the game's finished hands,
    which live in the room's archive rather than in its state."""
    view: dict[str, Any] = {
        "room": state.id,
        "kind": state.kind,
        "status": state.status,
        "seq": state.seq,
        "you": seat,
        "host": player is not None and player == state.host,
        "options": state.options.public(),
        "seats": seats_view(state),
        "spectators": len(state.spectators),
        "game_number": state.game_number,
        "game_id": state.game_id if state.game is not None else None,
        "deciding": deciding_seats(state),
        "next_hand_at": state.next_hand_at,
        "departures": [{k: d[k] for k in ("seat", "reason", "hand")} for d in state.departures],
        "hand_log": hand_log or [],
    }
    if state.game is not None:
        view["game"] = game_view(state.game, seat)
    sh = state.shuffle
    if sh is not None and not sh["dealt"]:
        # Public facts of the pending shuffle, so a client arriving now can take its part.
        view["shuffle"] = {
            "game": state.game_id,
            "hand": sh["hand"],
            "phase": sh["phase"],
            "deadline": sh["deadline"],
            "server_commitment": server_commitment_hex(state, sh["hand"]),
            "committed": [c is not None for c in sh["commitments"]],
            "revealed": [r is not None for r in sh["secrets"]],
            "commitments": (
                [
                    c.hex() if c is not None and k == "human" else None
                    for c, k in zip(sh["commitments"], sh["kinds"], strict=True)
                ]
                if sh["phase"] == "reveal"
                else None
            ),
        }
    return view


def server_commitment_hex(state: RoomState, hand: int) -> str:
    ctx = hand_context(state.game_id, hand)
    return server_commitment(ctx, server_secret(state.seed, ctx)).hex()


def event_message(room: str, seq: int, event: Event) -> dict[str, Any]:
    """An event as it goes on the wire (the audience stays on the server)."""
    return {"type": "event", "room": room, "seq": seq, "event": event.type, **event.data}
