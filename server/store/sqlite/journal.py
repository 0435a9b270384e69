"""The embedded node's journal file: one SQLite database in the data folder, written in place.

The memory stores write through it synchronously, one short transaction per store call, with no
await in between (``server.store.memory.journal``), so their calls stay atomic under asyncio.
Nothing else writes the file: the room store's journal holds an exclusive lock beside it for
its life (``<file>.lock``), so a second node on the same data folder refuses to start instead
of overwriting the first one's rooms. The session journal opens its own connection to the same
file without that lock (one process, calls that never overlap).

Write-ahead log, ``synchronous=NORMAL``: a commit is in the log, in the operating system's
hands, when it returns, so a crashed or killed process (``kill -9``) loses nothing it was told
was committed. A power loss or a kernel crash may lose the last commits since the log was last
synced to the disk (at a checkpoint), never the file's consistency: it opens at an earlier
commit. ``FULL`` would sync the log on every commit, on the event loop that serves every table,
for that rarer case; the hot state is the embedded node's games in play, not the store of
record (``server.record``, synchronous=FULL), so NORMAL is the trade (docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from server.store.rooms import StoreError, StoreUnavailable

FILE_NAME = "journal.sqlite3"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 1000

SCHEMA = (
    """CREATE TABLE rooms (
        id TEXT PRIMARY KEY, version INTEGER NOT NULL, state BLOB NOT NULL,
        trimmed INTEGER NOT NULL, expires REAL, deadline REAL)""",
    """CREATE TABLE events (
        room TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL,
        PRIMARY KEY (room, seq)) WITHOUT ROWID""",
    """CREATE TABLE archives (
        room TEXT NOT NULL, archive TEXT NOT NULL, name TEXT NOT NULL, data BLOB NOT NULL,
        PRIMARY KEY (room, archive, name)) WITHOUT ROWID""",
    # The heartbeat (at, 0) and the last outage (ended, delta).
    "CREATE TABLE clock (name TEXT PRIMARY KEY, a REAL NOT NULL, b REAL NOT NULL)",
    """CREATE TABLE tracked (
        node TEXT NOT NULL, room TEXT NOT NULL, PRIMARY KEY (node, room)) WITHOUT ROWID""",
    """CREATE TABLE sessions (
        digest TEXT PRIMARY KEY, player TEXT NOT NULL, expires REAL NOT NULL) WITHOUT ROWID""",
    "CREATE TABLE revoked (pos INTEGER PRIMARY KEY, digest TEXT NOT NULL)",
)
# Tables added since, made in a journal of the same version that lacks them (they only add).
ADDED = (
    """CREATE TABLE IF NOT EXISTS seated (
        player TEXT NOT NULL, room TEXT NOT NULL, PRIMARY KEY (player, room)) WITHOUT ROWID""",
)


class JournalFile:
    """An open journal: the connection, its schema, and (``locked``) the file's exclusive lock."""

    def __init__(self, path: Path, *, locked: bool = False, synchronous: str = "NORMAL") -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be NORMAL or FULL, got {synchronous!r}")
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock_fd = _lock(path) if locked else None
        try:
            # check_same_thread off: a test client may build the store in one thread and run the
            # app's loop in another; calls never overlap (each is a whole transaction).
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            try:
                self._setup(synchronous)
            except BaseException:
                self._db.close()
                raise
        except sqlite3.Error as e:
            self._unlock()
            raise StoreError(f"cannot open the journal {path}: {e}") from e
        except BaseException:
            self._unlock()
            raise

    def _setup(self, synchronous: str) -> None:
        db = self._db
        db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if db.execute("PRAGMA journal_mode=WAL").fetchone()[0] != "wal":
            raise StoreError(f"the journal {self.path} cannot use a write-ahead log")
        db.execute(f"PRAGMA synchronous={synchronous}")
        with self.write():
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                for statement in SCHEMA:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise StoreError(f"the journal {self.path} has schema {version}, not ours")
            for statement in ADDED:
                db.execute(statement)

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One transaction: committed when the block ends, rolled back if it raises. A refusal
        of SQLite's (disk full, I/O error) is ``StoreUnavailable``, and nothing was written."""
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            yield db
            db.execute("COMMIT")
        except BaseException as e:
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            if isinstance(e, sqlite3.Error):
                raise StoreUnavailable(f"the journal {self.path} refused a write: {e}") from e
            raise

    def read(self, sql: str, parameters: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
        """Every row of one query (used when a store opens: the columns are as written)."""
        try:
            return self._db.execute(sql, parameters).fetchall()
        except sqlite3.Error as e:
            raise StoreError(f"cannot read the journal {self.path}: {e}") from e

    def close(self) -> None:
        """Close the connection (its last close folds the log into the file) and the lock."""
        try:
            self._db.close()
        finally:
            self._unlock()

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the descriptor releases the lock
            self._lock_fd = None


def _lock(path: Path) -> int:
    """Take ``<path>.lock`` exclusively for this process (released when it dies, even killed)."""
    lock_path = path.with_name(path.name + ".lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreError(
            f"{path} is in use by another process: one embedded node per data folder"
        ) from None
    return fd
