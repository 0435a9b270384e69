"""The embedded node's durable hot state: the memory stores written through a SQLite journal.

``open_room_store(data_dir)`` and ``open_league_store(data_dir)`` are the memory stores of
``server.store.memory`` with a journal in ``data_dir/journal.sqlite3`` (beside the store of
record's ``hearts.sqlite3``): rooms in play and login sessions outlive the process, stopped or
killed. ``server.store.open_store``/``open_league_store`` pick them for a data folder.
"""

from __future__ import annotations

from pathlib import Path

from server.store.memory.league import MemoryLeagueStore
from server.store.memory.rooms import MemoryRoomStore
from server.store.rooms import DEFAULT_MAX_LOG
from server.store.sqlite.journal import FILE_NAME, JournalFile
from server.store.sqlite.rooms import SqliteRoomJournal
from server.store.sqlite.sessions import SqliteSessionJournal


def open_room_store(
    data_dir: Path, *, max_log: int = DEFAULT_MAX_LOG, synchronous: str = "NORMAL"
) -> MemoryRoomStore:
    """The room store journaled in ``data_dir``; StoreError if another process holds it."""
    journal = SqliteRoomJournal(
        JournalFile(data_dir / FILE_NAME, locked=True, synchronous=synchronous)
    )
    try:
        return MemoryRoomStore(max_log=max_log, journal=journal)
    except BaseException:
        journal.close()
        raise


def open_league_store(data_dir: Path) -> MemoryLeagueStore:
    """The league store whose sessions are journaled in ``data_dir``."""
    journal = SqliteSessionJournal(JournalFile(data_dir / FILE_NAME))
    try:
        return MemoryLeagueStore(journal=journal)
    except BaseException:
        journal.close()
        raise
