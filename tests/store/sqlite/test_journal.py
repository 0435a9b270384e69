"""The journal file: its pragmas, its schema's version, and a refused write that writes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from server.store import StoreError, StoreUnavailable
from server.store.sqlite.journal import FILE_NAME, SCHEMA_VERSION, JournalFile


def test_a_new_journal_is_a_write_ahead_log_with_the_schema(tmp_path: Path) -> None:
    journal = JournalFile(tmp_path / "data" / FILE_NAME)  # the folder is made
    try:
        assert journal.read("PRAGMA journal_mode") == [("wal",)]
        assert journal.read("PRAGMA synchronous") == [(1,)]  # NORMAL
        assert journal.read("PRAGMA user_version") == [(SCHEMA_VERSION,)]
    finally:
        journal.close()
    full = JournalFile(tmp_path / "data" / FILE_NAME, synchronous="FULL")
    try:
        assert full.read("PRAGMA synchronous") == [(2,)]
    finally:
        full.close()
    with pytest.raises(ValueError):
        JournalFile(tmp_path / FILE_NAME, synchronous="OFF")


def test_a_refused_write_is_rolled_back_whole(tmp_path: Path) -> None:
    journal = JournalFile(tmp_path / FILE_NAME)
    try:
        with pytest.raises(StoreUnavailable), journal.write() as db:
            db.execute("INSERT INTO clock (name, a, b) VALUES ('heartbeat', 1, 0)")
            db.execute("INSERT INTO clock (name, a, b) VALUES ('heartbeat', 2, 0)")  # a duplicate
        assert journal.read("SELECT * FROM clock") == []
        with journal.write() as db:  # and the next write goes through
            db.execute("INSERT INTO clock (name, a, b) VALUES ('heartbeat', 3, 0)")
        assert journal.read("SELECT a FROM clock") == [(3.0,)]
    finally:
        journal.close()


def test_a_file_of_another_schema_or_kind_is_refused(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError, match="schema"):
        JournalFile(path, locked=True)
    other = tmp_path / "other" / FILE_NAME
    other.parent.mkdir()
    other.write_bytes(b"not a database, " * 100)
    with pytest.raises(StoreError):
        JournalFile(other, locked=True)
    # A refused open let its lock go: the folder can be opened once the file is fixed.
    other.unlink()
    JournalFile(other, locked=True).close()
