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
from .records import SEATS, GameRecord, HandRecord, SeatRecord
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
    names: tuple[str | None, ...] = ()  # the four seats' names (None: a deleted player)
    bots: tuple[str | None, ...] = ()  # the four seats' bot levels (None: a person)

    @property
    def cursor(self) -> GameCursor:
        return GameCursor(self.finished_at, self.game_id)


def encoded_hands(record: GameRecord) -> bytes:
    """The game's hands as one value (encoded before the transaction opens: CPU, not a lock,
    is spent)."""
    return encode_hands([(hand.over, hand.audit) for hand in record.hands])


def game_row(record: GameRecord, encoded: bytes) -> dict[str, Any]:
    """The ``games`` row of a record whose hands are ``encoded`` (``encoded_hands``)."""
    return {
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


def seat_rows(record: GameRecord) -> list[dict[str, Any]]:
    """The record's four ``game_seats`` rows."""
    return [
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


async def insert_game(
    connection: AsyncConnection, record: GameRecord, encoded: bytes
) -> bool:
    """Write the game, its seats and its hands; False, writing nothing, if its id is kept."""
    statement = insert_or_skip(connection, games, index_elements=["game_id"])
    inserted = await connection.execute(
        statement.values(game_row(record, encoded)).returning(games.c.game_id)
    )
    if inserted.first() is None:
        return False  # kept already (a retry, or another node): the key made this a no-op
    await connection.execute(sa.insert(game_seats), seat_rows(record))
    return True


_SEAT_COLUMNS = ("participant_id", "name", "bot", "rating_before", "rating_after")


async def read_game(connection: AsyncConnection, game_id: str) -> GameRecord | None:
    """The kept game, or None: one query (the game's row joined with its four seats by their
    primary key), since a game's page is one round trip more or less on every view."""
    each = [game_seats.alias(f"seat{k}") for k in range(SEATS)]
    query = sa.select(
        games, *(getattr(seat.c, name) for seat in each for name in _SEAT_COLUMNS)
    ).select_from(games)
    for k, seat in enumerate(each):
        query = query.join(seat, sa.and_(seat.c.game_id == games.c.game_id, seat.c.seat == k))
    game = (await connection.execute(query.where(games.c.game_id == game_id))).first()
    if game is None:
        return None
    width = len(_SEAT_COLUMNS)
    seated = game[len(games.c) :]
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
            SeatRecord(k, *seated[k * width : (k + 1) * width]) for k in range(SEATS)
        ),
        hands=tuple(kept_hands),
    )


async def games_of(
    connection: AsyncConnection, player_id: str, before: GameCursor | None, limit: int
) -> list[PlayerGame]:
    """The player's games finished before ``before`` (all if None), newest first, each with
    its four seats' names and bots: one query, a range scan of ``ix_game_seats_player`` however
    deep the page, and per game its row and its four seats by primary key (no query per game)."""
    if not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"a page holds 1 to {MAX_PAGE} games")
    mine = game_seats.alias("mine")
    each = [game_seats.alias(f"seat{k}") for k in range(SEATS)]
    query = sa.select(
        games.c.game_id,
        games.c.room_id,
        games.c.kind,
        mine.c.finished_at,
        games.c.rated,
        mine.c.seat,
        games.c.scores,
        games.c.winners,
        mine.c.rating_before,
        mine.c.rating_after,
        *(column for seat in each for column in (seat.c.name, seat.c.bot)),
    ).select_from(mine.join(games, games.c.game_id == mine.c.game_id))
    for k, seat in enumerate(each):
        query = query.join(seat, sa.and_(seat.c.game_id == mine.c.game_id, seat.c.seat == k))
    query = (
        query.where(mine.c.participant_id == player_id)
        .order_by(mine.c.finished_at.desc(), mine.c.game_id.desc())
        .limit(limit)
    )
    if before is not None:
        key = sa.tuple_(mine.c.finished_at, mine.c.game_id)
        query = query.where(key < sa.tuple_(sa.literal(before.finished_at), before.game_id))
    lines = []
    for r in await connection.execute(query):
        seats = r[10:]
        lines.append(
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
                names=tuple(seats[0::2]),
                bots=tuple(seats[1::2]),
            )
        )
    return lines


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
