"""A small finished game as the store of record keeps it: enough for seats, keys and ratings."""

from __future__ import annotations

from server.record.records import GameRecord


def finished_game(
    game_id: str, players: list[str], names: list[str], *, at: float = 1000.0, rated: bool = False
) -> GameRecord:
    """A game of one hand that ``players`` (four ids, with ``names``) finished at ``at``."""
    return GameRecord.from_value(
        {
            "game_id": game_id,
            "room_id": f"room-{game_id}",
            "kind": "friends",
            "options": {"target": 100, "rated": rated},
            "started_at": at - 600.0,
            "finished_at": at,
            "scores": [26, 0, 0, 0],
            "winners": [1, 2, 3],
            "rated": rated,
            "departures": [],
            "seats": [
                {"seat": i, "participant": p, "name": n, "bot": None}
                for i, (p, n) in enumerate(zip(players, names, strict=True))
            ],
            "hands": [{"number": 1, "over": {"hand": 1, "points": [26, 0, 0, 0]}, "audit": None}],
        }
    )
