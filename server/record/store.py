"""The store of record: what must outlive a room, in PostgreSQL or a SQLite file.

``RecordStore`` holds one async engine (``engine.py``) and runs each operation as one
transaction over the modules that know the tables (``games.py``, ``ratings.py``,
``accounts.py``). Natural keys make writes idempotent: a game is kept once by its id (a second
``archive_game`` is a no-op that says so), a server key once by its name (two nodes racing keep
one), an account once by its player id and its name. Every input is checked before its
transaction opens (``records.py``), so a refused record writes nothing.

The schema must be current (``migrate.py``); the store never creates tables itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from server.core.ratings import Rating

from . import accounts as account_rows
from . import games as game_rows
from . import push as push_rows
from . import ratings as rating_rows
from .engine import READ_ONLY, make_engine
from .games import GameCursor, PlayerGame
from .push import PushSettings, Subscription
from .records import MAX_ID, GameRecord, RatingChange, check_changes, finite, text
from .schema import server_keys
from .upsert import insert_or_skip
from .values import Account, HistoryPoint, LadderRow, PlayerRating

MAX_KEY_BYTES = 64 * 1024


class ArchiveResult(Enum):
    ARCHIVED = "archived"  # this call wrote the game (and its rating changes)
    ALREADY_ARCHIVED = "already_archived"  # the game id was kept before; nothing changed
    CONFLICT = "conflict"  # a participant's rating version moved; nothing changed: recompute


class RecordStore:
    """See the module docstring. Safe for many tasks and many nodes at once."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url: str) -> RecordStore:
        return cls(make_engine(url))

    async def close(self) -> None:
        await self.engine.dispose()

    def _read(self) -> _ReadConnection:
        return _ReadConnection(self.engine)

    # Games ----------------------------------------------------------------------------------

    async def archive_game(
        self, record: GameRecord, changes: Sequence[RatingChange] = ()
    ) -> ArchiveResult:
        """Keep the game, its seats, every hand and, for a rated game, its participants' rating
        changes (compare-and-set on each one's version, and a history point each), all in one
        transaction. ALREADY_ARCHIVED if the game id is kept (nothing changes, whatever this
        call carried); CONFLICT if a participant's version moved (nothing is written: re-read
        ``ratings`` and recompute); ``RecordError`` for a malformed record or change. A
        participant who deleted their account meanwhile is kept as "a deleted player" (no id,
        no name) and their rating change, if any, is dropped: nothing is written under the
        deleted id, on the first call or on a retry."""
        record.check()
        check_changes(record, changes)
        encoded = game_rows.encoded_hands(record)
        try:
            async with self.engine.begin() as connection:
                seated = [s.participant for s in record.seats if s.participant is not None]
                gone = await account_rows.deleted_among(connection, seated)
                if gone:  # deleted since the game began: "a deleted player", and no rating
                    record = game_rows.forgetting(record, gone)
                    changes = [c for c in changes if c.player_id not in gone]
                if not await game_rows.insert_game(connection, record, encoded):
                    return ArchiveResult.ALREADY_ARCHIVED
                await rating_rows.post_changes(connection, record, changes)
        except rating_rows.RatingConflict:
            return ArchiveResult.CONFLICT  # the transaction rolled back: the game too
        return ArchiveResult.ARCHIVED

    async def game(self, game_id: str) -> GameRecord | None:
        async with self._read() as connection:
            return await game_rows.read_game(connection, game_id)

    async def player_games(
        self, player_id: str, *, before: GameCursor | None = None, limit: int = 20
    ) -> list[PlayerGame]:
        """The player's finished games, newest first, after the cursor of the previous page's
        last game (``PlayerGame.cursor``); each game appears on exactly one page."""
        async with self._read() as connection:
            return await game_rows.games_of(connection, player_id, before, limit)

    # Ratings --------------------------------------------------------------------------------

    async def ratings(self, player_ids: Iterable[str]) -> dict[str, PlayerRating]:
        """Each participant's rating with its version (``PlayerRating()``, version 0, if it
        was never rated); the name is the account's, or "" for a guest."""
        async with self._read() as connection:
            return await rating_rows.read_ratings(connection, player_ids)

    async def rating_history(self, player_id: str, limit: int = 50) -> list[HistoryPoint]:
        async with self._read() as connection:
            return await rating_rows.history(connection, player_id, limit)

    async def rating_changes(
        self, game_id: str, player_ids: Sequence[str], at: float
    ) -> dict[str, tuple[Rating, Rating, int]]:
        """The kept changes of a game finished ``at``: each player's rating before and after
        it and rated games after it (players with no change kept are left out)."""
        async with self._read() as connection:
            return await rating_rows.changes_of(connection, game_id, player_ids, at)

    async def ladder(self, offset: int = 0, limit: int = 50) -> list[LadderRow]:
        """Ladder rows ``offset`` to ``offset + limit - 1``, with competition ranks."""
        async with self._read() as connection:
            return await rating_rows.ladder(connection, offset, limit)

    async def ladder_size(self) -> int:
        async with self._read() as connection:
            return await rating_rows.ladder_size(connection)

    async def rank_of(self, player_id: str) -> int | None:
        async with self._read() as connection:
            return await rating_rows.rank_of(connection, player_id)

    async def around(self, player_id: str, k: int = 5) -> list[LadderRow]:
        async with self._read() as connection:
            return await rating_rows.around(connection, player_id, k)

    # Server keys ----------------------------------------------------------------------------

    async def put_server_key(self, name: str, value: bytes, *, now: float) -> bytes:
        """Keep ``value`` under ``name`` unless a key is kept there already; returns the kept
        value, so of two nodes making a key at once both end up using the same one."""
        text(name, "server key name", MAX_ID)
        if not isinstance(value, bytes) or not 0 < len(value) <= MAX_KEY_BYTES:
            raise ValueError(f"a server key is 1 to {MAX_KEY_BYTES} bytes")
        finite(now, "now")
        async with self.engine.begin() as connection:
            statement = insert_or_skip(connection, server_keys, index_elements=["name"])
            await connection.execute(statement.values(name=name, value=value, created_at=now))
            kept = await connection.scalar(
                sa.select(server_keys.c.value).where(server_keys.c.name == name)
            )
        assert kept is not None
        return bytes(kept)

    async def server_key(self, name: str) -> bytes | None:
        async with self._read() as connection:
            kept = await connection.scalar(
                sa.select(server_keys.c.value).where(server_keys.c.name == name)
            )
        return None if kept is None else bytes(kept)

    # Push subscriptions (issue 54) ----------------------------------------------------------

    async def add_subscription(self, subscription: Subscription) -> bool:
        """Keep a device for its player (``push.add``); ``TooManyDevices`` past the limit."""
        async with self.engine.begin() as connection:
            return await push_rows.add(connection, subscription)

    async def subscriptions(self, player_ids: Iterable[str]) -> dict[str, list[Subscription]]:
        async with self._read() as connection:
            return await push_rows.of_players(connection, player_ids)

    async def push_targets(
        self, player_ids: Iterable[str]
    ) -> tuple[dict[str, list[Subscription]], dict[str, PushSettings]]:
        """Each player's devices and push settings, in one read (the push sender's)."""
        wanted = list(player_ids)
        async with self._read() as connection:
            devices = await push_rows.of_players(connection, wanted)
            return devices, await push_rows.settings_of(connection, wanted)

    async def remove_subscription(self, player_id: str, device: str) -> bool:
        async with self.engine.begin() as connection:
            return await push_rows.remove(connection, player_id, device)

    async def drop_subscription(self, endpoint: str) -> bool:
        async with self.engine.begin() as connection:
            return await push_rows.drop(connection, endpoint)

    async def push_settings(self, player_id: str) -> PushSettings:
        async with self._read() as connection:
            return (await push_rows.settings_of(connection, [player_id]))[player_id]

    async def set_push_settings(
        self, player_id: str, settings: PushSettings, *, now: float
    ) -> None:
        async with self.engine.begin() as connection:
            await push_rows.put_settings(connection, player_id, settings, now)

    # Accounts -------------------------------------------------------------------------------

    async def create_account(self, account: Account, *, claimed_guest: bool = False) -> None:
        """Create the account; ``NameTaken`` or ``AccountExists`` (writing nothing) if its
        name key or its player id is taken, ``PlayerDeleted`` if the id deleted its account
        before. A claimed guest keeps its id, so its rating and games stay, and it goes on the
        ladder at once if it has played enough."""
        async with self.engine.begin() as connection:
            await account_rows.insert_account(connection, account, claimed_guest)

    async def account(self, player_id: str) -> Account | None:
        async with self._read() as connection:
            return await account_rows.read_account(connection, player_id)

    async def account_by_name(self, name_key: str) -> Account | None:
        async with self._read() as connection:
            return await account_rows.account_named(connection, name_key)

    async def taken(self, player_id: str, name_key: str | None = None) -> bool:
        """Whether the player id has or had an account, or (given a name key) an account
        holds that name: one read, for checking a guest token on every ``auth``."""
        async with self._read() as connection:
            return await account_rows.taken(connection, player_id, name_key)

    async def set_password(self, player_id: str, password_hash: str) -> bool:
        """Replace the hash; False if there is no such account. (Revoking the account's
        sessions, which live in the session store, is the caller's.)"""
        async with self.engine.begin() as connection:
            return await account_rows.change_password(connection, player_id, password_hash)

    async def delete_account(self, player_id: str) -> bool:
        """Delete the account for good (``accounts.py``); False if there is none."""
        async with self.engine.begin() as connection:
            return await account_rows.remove_account(connection, player_id)


class _ReadConnection:
    """A connection for reads: on SQLite its transaction starts deferred, so readers never
    queue behind a writer (WAL gives them a snapshot)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._connection: AsyncConnection | None = None

    async def __aenter__(self) -> AsyncConnection:
        self._connection = await self._engine.connect()
        await self._connection.execution_options(**{READ_ONLY: True})
        return self._connection

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._connection is not None
        await self._connection.close()  # rolls back the read's transaction
