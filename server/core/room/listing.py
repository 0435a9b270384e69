"""A room as the player's list of games shows it ("Your games", ``GET /api/me/games``): whose
turn it is and since when, from the state alone (pure; ``now`` passed in). Never a card."""

from __future__ import annotations

from typing import Any

from .clocks import deciding_seats
from .notices import table_name
from .state import RoomState


def listing(state: RoomState, player: str, now: float) -> dict[str, Any] | None:
    """The entry of a room that seats ``player``; None if it does not."""
    you = state.seat_of(player)
    if you is None:
        return None
    deciding = deciding_seats(state)
    since = [
        s.turn_since
        for i in deciding
        if (s := state.seats[i]) is not None and s.turn_since is not None
    ]
    waiting_since = min(since) if since else None
    return {
        "room": state.id,
        "link": f"/r/{state.id}",
        "kind": state.kind,
        "pace": state.options.pace,
        "status": state.status,
        "table": table_name(state),
        "seat": you,
        "seats": [
            None if s is None else {"name": s.name, "bot": s.is_bot, "away": not s.conns}
            for s in state.seats
        ],
        "your_turn": you in deciding,
        "waiting_on": deciding,
        "waiting_since": waiting_since,
        "waited": None if waiting_since is None else max(0.0, now - waiting_since),
        "scores": state.game.scores.copy() if state.game is not None else None,
        "target": state.options.rules.target,
    }


def by_urgency(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Your turn first; then the longest waiting; rooms not started last."""
    return sorted(
        entries,
        key=lambda e: (not e["your_turn"], e["status"] != "playing", -(e["waited"] or 0.0)),
    )
