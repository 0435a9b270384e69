"""Ratings in SQL: read with their versions, changed by compare-and-set, every change kept.

Functions on an open connection inside the caller's transaction. ``post_changes`` runs in the
transaction that writes the game (``store.py``), so a game's record and its rating changes
commit together or not at all, and a participant whose version moved since the caller read it
(another game of theirs landed first) fails the whole transaction: the caller re-reads and
recomputes (``server/league/archiving.py`` does exactly this).

The ladder's key (``ratings.ladder_score``) is written here and by account creation and
deletion (``accounts.py``), each under the rating row's lock: an account past its provisional
games has its conservative rating there, everyone else NULL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from server.core.ratings import Rating, display_rating, ladder_score

from .records import GameRecord, RatingChange
from .schema import accounts, rating_history, ratings
from .upsert import insert_or_skip
from .values import HistoryPoint, LadderRow, PlayerRating

MAX_ROWS = 200
MAX_HISTORY = 1000  # a player page plots this many points (docs/protocol.md)


class RatingConflict(Exception):
    """A participant's version moved: the transaction must roll back (never escapes store.py)."""


async def read_ratings(
    connection: AsyncConnection, player_ids: Iterable[str]
) -> dict[str, PlayerRating]:
    wanted = list(dict.fromkeys(player_ids))
    found = {p: PlayerRating() for p in wanted}
    if not wanted:
        return found
    rows = await connection.execute(
        sa.select(
            ratings.c.player_id,
            ratings.c.mu,
            ratings.c.sigma,
            ratings.c.games,
            ratings.c.version,
            accounts.c.name,
        )
        .outerjoin(accounts, accounts.c.player_id == ratings.c.player_id)
        .where(ratings.c.player_id.in_(wanted))
    )
    for r in rows:
        found[r.player_id] = PlayerRating(Rating(r.mu, r.sigma), r.games, r.name or "", r.version)
    return found


async def post_changes(
    connection: AsyncConnection, record: GameRecord, changes: Sequence[RatingChange]
) -> None:
    """Write each change if its participant's version is still the one read; raise
    ``RatingConflict`` otherwise. In player order, so two posts sharing players lock their rows
    in one order (no deadlock)."""
    if not changes:
        return
    ordered = sorted(changes, key=lambda c: c.player_id)
    held = await connection.execute(
        sa.select(accounts.c.player_id).where(
            accounts.c.player_id.in_([c.player_id for c in ordered])
        )
    )
    account_ids = {row.player_id for row in held}
    for change in ordered:
        after = Rating(change.mu_after, change.sigma_after)
        values = {
            "mu": after.mu,
            "sigma": after.sigma,
            "games": change.games,
            "version": change.version + 1,
            "ladder_score": (
                ladder_score(after, change.games) if change.player_id in account_ids else None
            ),
        }
        if change.version == 0:  # never rated: the row must not exist yet
            statement = insert_or_skip(connection, ratings, index_elements=["player_id"])
            written = await connection.execute(
                statement.values(player_id=change.player_id, **values)
            )
        else:
            written = await connection.execute(
                sa.update(ratings)
                .where(ratings.c.player_id == change.player_id)
                .where(ratings.c.version == change.version)
                .values(**values)
            )
        if written.rowcount != 1:
            raise RatingConflict(change.player_id)
    await connection.execute(
        sa.insert(rating_history),
        [
            {
                "player_id": c.player_id,
                "game_id": record.game_id,
                "at": record.finished_at,
                "mu_before": c.mu_before,
                "sigma_before": c.sigma_before,
                "mu_after": c.mu_after,
                "sigma_after": c.sigma_after,
                "display": display_rating(Rating(c.mu_after, c.sigma_after)),
                "games": c.games,
            }
            for c in ordered
        ],
    )


async def set_ladder(connection: AsyncConnection, player_id: str, on: bool) -> None:
    """Put the player's rating on the ladder (an account now) or take it off. Locks the row
    and bumps its version, so a post that read the player before this changed fails its
    compare-and-set and recomputes with the account's state."""
    row = (
        await connection.execute(
            sa.select(ratings.c.mu, ratings.c.sigma, ratings.c.games, ratings.c.version)
            .where(ratings.c.player_id == player_id)
            .with_for_update()
        )
    ).first()
    if row is None:
        return
    score = ladder_score(Rating(row.mu, row.sigma), row.games) if on else None
    await connection.execute(
        sa.update(ratings)
        .where(ratings.c.player_id == player_id)
        .values(ladder_score=score, version=row.version + 1)
    )


async def history(connection: AsyncConnection, player_id: str, limit: int) -> list[HistoryPoint]:
    """The participant's rating after each of its latest games, newest first (all of them are
    kept; ``limit`` pages)."""
    if not 1 <= limit <= MAX_HISTORY:
        raise ValueError(f"between 1 and {MAX_HISTORY} points at a time")
    rows = await connection.execute(
        sa.select(rating_history)
        .where(rating_history.c.player_id == player_id)
        .order_by(rating_history.c.at.desc(), rating_history.c.game_id.desc())
        .limit(limit)
    )
    return [
        HistoryPoint(r.game_id, r.at, r.mu_after, r.sigma_after, r.display, r.games) for r in rows
    ]


async def ladder(connection: AsyncConnection, offset: int, limit: int) -> list[LadderRow]:
    """Ladder rows ``offset`` to ``offset + limit - 1``: an index scan of ``ix_ratings_ladder``,
    with competition ranks (equal scores share a rank, the next rank skips)."""
    if offset < 0 or not 1 <= limit <= MAX_ROWS:
        raise ValueError(f"an offset of 0 or more and 1 to {MAX_ROWS} rows")
    rows = list(
        await connection.execute(
            sa.select(
                ratings.c.player_id, ratings.c.ladder_score, ratings.c.mu, ratings.c.sigma,
                ratings.c.games, accounts.c.name,
            )
            .join(accounts, accounts.c.player_id == ratings.c.player_id)
            .where(ratings.c.ladder_score.is_not(None))
            .order_by(ratings.c.ladder_score.desc(), ratings.c.player_id)
            .offset(offset)
            .limit(limit)
        )
    )
    if not rows:
        return []
    above = await connection.scalar(
        sa.select(sa.func.count()).where(ratings.c.ladder_score > rows[0].ladder_score)
    )
    result: list[LadderRow] = []
    rank = int(above or 0) + 1
    for position, r in enumerate(rows):
        if position and r.ladder_score != rows[position - 1].ladder_score:
            rank = offset + position + 1  # every row before it scores strictly higher
        shown = display_rating(Rating(r.mu, r.sigma))
        result.append(LadderRow(rank, r.player_id, r.name, shown, r.games, r.ladder_score))
    return result


async def changes_of(
    connection: AsyncConnection, game_id: str, player_ids: Sequence[str], at: float
) -> dict[str, tuple[Rating, Rating, int]]:
    """The game's kept rating changes: each player's rating before and after it, and rated
    games after it (a lookup of the history's key per player)."""
    if not player_ids:
        return {}
    rows = await connection.execute(
        sa.select(rating_history)
        .where(rating_history.c.player_id.in_(list(player_ids)))
        .where(rating_history.c.at == at)
        .where(rating_history.c.game_id == game_id)
    )
    return {
        r.player_id: (
            Rating(r.mu_before, r.sigma_before),
            Rating(r.mu_after, r.sigma_after),
            r.games,
        )
        for r in rows
    }


async def ladder_size(connection: AsyncConnection) -> int:
    # ladder_score is NULL for every row that is not an account's (the module docstring)
    count = await connection.scalar(
        sa.select(sa.func.count()).where(ratings.c.ladder_score.is_not(None))
    )
    return int(count or 0)


async def _score_of(connection: AsyncConnection, player_id: str) -> int | None:
    score = await connection.scalar(
        sa.select(ratings.c.ladder_score).where(ratings.c.player_id == player_id)
    )
    return None if score is None else int(score)


async def rank_of(connection: AsyncConnection, player_id: str) -> int | None:
    """The player's competition rank (1 = top), or None if it is not on the ladder."""
    score = await _score_of(connection, player_id)
    if score is None:
        return None
    above = await connection.scalar(
        sa.select(sa.func.count()).where(ratings.c.ladder_score > score)
    )
    return int(above or 0) + 1


async def around(connection: AsyncConnection, player_id: str, k: int) -> list[LadderRow]:
    """The player's ladder row with up to ``k`` rows above and below; [] if unranked."""
    score = await _score_of(connection, player_id)
    if score is None or not 0 <= k <= MAX_ROWS // 2:
        return []
    position = await connection.scalar(
        sa.select(sa.func.count()).where(
            sa.or_(
                ratings.c.ladder_score > score,
                sa.and_(ratings.c.ladder_score == score, ratings.c.player_id < player_id),
            )
        )
    )
    start = max(0, int(position or 0) - k)
    return await ladder(connection, start, int(position or 0) - start + k + 1)
