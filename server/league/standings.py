"""The ladder and a player's standing, as the HTTP API and the ``ladder`` command show them.

Read from the store of record (``server/record``), where every rating and its full history is
kept. The answers' shapes are documented in docs/protocol.md ("The ladder", "Players").

>>> standings = Standings(record_store)  # doctest: +SKIP
>>> (await standings.ladder("p-ann", 20))["you"]["rank"]  # doctest: +SKIP
3
"""

from __future__ import annotations

from typing import Any

from server.record.games import PlayerGame
from server.record.store import RecordStore

AROUND = 3  # ladder rows shown above and below the asking player
HISTORY = 50  # rating points on a player's page
RECENT = 10  # games on a player's page


def _game_line(game: PlayerGame) -> dict[str, Any]:
    change = (
        None
        if game.rating_before is None or game.rating_after is None
        else game.rating_after - game.rating_before
    )
    return {
        "game": game.game_id,
        "room": game.room_id,
        "kind": game.kind,
        "finished_at": game.finished_at,
        "rated": game.rated,
        "seat": game.seat,
        "scores": list(game.scores),
        "winners": list(game.winners),
        "rating_before": game.rating_before,
        "rating_after": game.rating_after,
        "change": change,
    }


class Standings:
    def __init__(self, records: RecordStore) -> None:
        self.records = records

    async def ladder(self, player: str | None, limit: int = 20) -> dict[str, Any]:
        """The top ``limit`` rows, the ladder's size, and the asker's own standing."""
        answer: dict[str, Any] = {
            "top": [row._asdict() for row in await self.records.ladder(0, limit)],
            "size": await self.records.ladder_size(),
        }
        if player is not None:
            me = (await self.records.ratings([player]))[player]
            answer["you"] = {
                "display": me.display,
                "games": me.games,
                "provisional": me.provisional,
                "rank": await self.records.rank_of(player),
                "around": [row._asdict() for row in await self.records.around(player, AROUND)],
            }
        return answer

    async def player(self, player: str) -> dict[str, Any]:
        """A player's rating, rank, rating history and latest finished games."""
        me = (await self.records.ratings([player]))[player]
        name = me.name  # an account's, if it has been rated
        if not name:
            account = await self.records.account(player)
            name = account.name if account is not None else ""
        return {
            "player": player,
            "name": name,
            "display": me.display,
            "mu": me.rating.mu,
            "sigma": me.rating.sigma,
            "games": me.games,
            "provisional": me.provisional,
            "rank": await self.records.rank_of(player),
            "history": [h.to_value() for h in await self.records.rating_history(player, HISTORY)],
            "recent_games": [
                _game_line(g) for g in await self.records.player_games(player, limit=RECENT)
            ],
        }
