"""Finished games in SQL: written once by their id, read back whole, listed per player by key.

Functions on an open connection inside the caller's transaction (``store.py`` owns the
transactions, so a game, its seats, its hands and its rating changes commit together).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from .hand_codec import FORMAT, decode_hands, encode_hands
from .records import GameRecord, HandRecord, SeatRecord
from .schema import game_seats, games
from .upsert import insert_or_skip

MAX_PAGE = 100


@dataclass(frozen=True, slots=True, order=True)
class GameCursor:
    """Where a page of a player's games ended: the last game's (finished_at, game_id)."""

    finished_at: float
    game_id: str


@dataclass(frozen=True, slots=True)
class PlayerGame:
    """One finished game as a line of a player's list."""

    game_id: str
    room_id: str
    kind: str
    finished_at: float
    rated: bool
    seat: int
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    rating_before: int | None
    rating_after: int | None

    @property
    def cursor(self) -> GameCursor:
        return GameCursor(self.finished_at, self.game_id)


def encoded_hands(record: GameRecord) -> bytes:
    """The game's hands as one value (encoded before the transaction opens: CPU, not a lock,
    is spent)."""
    return encode_hands([(hand.over, hand.audit) for hand in record.hands])


async def insert_game(
    connection: AsyncConnection, record: GameRecord, encoded: bytes
) -> bool:
    """Write the game, its seats and its hands; False, writing nothing, if its id is kept."""
    row = {
        "game_id": record.game_id,
        "room_id": record.room_id,
        "kind": record.kind,
        "options": dict(record.options),
        "started_at": record.started_at,
        "finished_at": record.finished_at,
        "scores": list(record.scores),
        "winners": list(record.winners),
        "rated": record.rated,
        "departures": [dict(d) for d in record.departures],
        "hands_format": FORMAT,
        "hands": encoded,
    }
    statement = insert_or_skip(connection, games, index_elements=["game_id"])
    inserted = await connection.execute(statement.values(row).returning(games.c.game_id))
    if inserted.first() is None:
        return False  # kept already (a retry, or another node): the key made this a no-op
    seats = [
        {
            "game_id": record.game_id,
            "seat": seat.seat,
            "participant_id": seat.participant,
            "name": seat.name,
            "bot": seat.bot,
            "rating_before": seat.rating_before,
            "rating_after": seat.rating_after,
            "finished_at": record.finished_at,
        }
        for seat in record.seats
    ]
    await connection.execute(sa.insert(game_seats), seats)
    return True


async def read_game(connection: AsyncConnection, game_id: str) -> GameRecord | None:
    game = (await connection.execute(sa.select(games).where(games.c.game_id == game_id))).first()
    if game is None:
        return None
    seats = await connection.execute(
        sa.select(game_seats).where(game_seats.c.game_id == game_id).order_by(game_seats.c.seat)
    )
    kept_hands = [
        HandRecord(number, over, audit)
        for number, (over, audit) in enumerate(
            decode_hands(bytes(game.hands), game.hands_format), start=1
        )
    ]
    return GameRecord(
        game_id=game.game_id,
        room_id=game.room_id,
        kind=game.kind,
        options=game.options,
        started_at=game.started_at,
        finished_at=game.finished_at,
        scores=tuple(game.scores),
        winners=tuple(game.winners),
        rated=game.rated,
        departures=tuple(game.departures),
        seats=tuple(
            SeatRecord(
                s.seat, s.participant_id, s.name, s.bot, s.rating_before, s.rating_after
            )
            for s in seats
        ),
        hands=tuple(kept_hands),
    )


async def games_of(
    connection: AsyncConnection, player_id: str, before: GameCursor | None, limit: int
) -> list[PlayerGame]:
    """The player's games finished before ``before`` (all if None), newest first: one range
    scan of ``ix_game_seats_player`` however deep the page."""
    if not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"a page holds 1 to {MAX_PAGE} games")
    query = (
        sa.select(
            games.c.game_id,
            games.c.room_id,
            games.c.kind,
            game_seats.c.finished_at,
            games.c.rated,
            game_seats.c.seat,
            games.c.scores,
            games.c.winners,
            game_seats.c.rating_before,
            game_seats.c.rating_after,
        )
        .join(games, games.c.game_id == game_seats.c.game_id)
        .where(game_seats.c.participant_id == player_id)
        .order_by(game_seats.c.finished_at.desc(), game_seats.c.game_id.desc())
        .limit(limit)
    )
    if before is not None:
        key = sa.tuple_(game_seats.c.finished_at, game_seats.c.game_id)
        query = query.where(key < sa.tuple_(sa.literal(before.finished_at), before.game_id))
    rows = await connection.execute(query)
    return [
        PlayerGame(
            r.game_id,
            r.room_id,
            r.kind,
            r.finished_at,
            r.rated,
            r.seat,
            tuple(r.scores),
            tuple(r.winners),
            r.rating_before,
            r.rating_after,
        )
        for r in rows
    ]


def _scrubbed(
    departures: Sequence[Mapping[str, Any]], gone: Collection[str]
) -> list[dict[str, Any]]:
    return [{**d, "player": None} if d.get("player") in gone else dict(d) for d in departures]


def forgetting(record: GameRecord, gone: Collection[str]) -> GameRecord:
    """The record with these players as "a deleted player": what ``forget_player`` makes of
    an archived game, for a game archived after the deletion."""
    seats = tuple(
        replace(s, participant=None, name=None) if s.participant in gone else s
        for s in record.seats
    )
    return replace(record, seats=seats, departures=tuple(_scrubbed(record.departures, gone)))


async def forget_player(connection: AsyncConnection, player_id: str) -> int:
    """Make the player "a deleted player" in every finished game: the seat keeps its place,
    score and ratings (nobody else's record changes), loses the id and the name; the games'
    departure records lose the id. Returns how many games were touched."""
    ids = [
        row.game_id
        for row in await connection.execute(
            sa.select(game_seats.c.game_id).where(game_seats.c.participant_id == player_id)
        )
    ]
    if not ids:
        return 0
    await connection.execute(
        sa.update(game_seats)
        .where(game_seats.c.participant_id == player_id)
        .values(participant_id=None, name=None)
    )
    for game_id, departures in await connection.execute(
        sa.select(games.c.game_id, games.c.departures).where(games.c.game_id.in_(ids))
    ):
        scrubbed = _scrubbed(departures, {player_id})
        if scrubbed != departures:
            await connection.execute(
                sa.update(games).where(games.c.game_id == game_id).values(departures=scrubbed)
            )
    return len(ids)
