"""The engine's URLs, the SQLite connection's settings and the embedded node's data folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from server.record.engine import DATABASE_FILE, default_data_dir, default_url, make_engine


@pytest.mark.parametrize(
    "url",
    ["sqlite+aiosqlite://", "sqlite+aiosqlite:///:memory:", "sqlite:///x.db", "mysql://u:pw@h/d"],
)
def test_other_databases_are_refused_without_showing_a_password(url: str) -> None:
    with pytest.raises(ValueError) as refused:
        make_engine(url)
    assert "pw" not in str(refused.value)


async def test_a_sqlite_file_runs_in_wal_with_foreign_keys_and_a_busy_timeout(
    tmp_path: Path,
) -> None:
    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path / 'x.sqlite3'}")
    try:
        async with engine.connect() as connection:
            pragmas = {
                name: await connection.scalar(sa.text(f"PRAGMA {name}"))
                for name in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous")
            }
    finally:
        await engine.dispose()
    assert pragmas == {
        "journal_mode": "wal",
        "foreign_keys": 1,
        "busy_timeout": 10_000,
        "synchronous": 2,
    }


def test_the_data_folder_is_the_variable_else_the_users_data_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HEARTS_DATA_DIR", str(tmp_path / "mine"))
    assert default_data_dir() == tmp_path / "mine"
    assert default_url() == f"sqlite+aiosqlite:///{tmp_path / 'mine' / DATABASE_FILE}"
    assert (tmp_path / "mine").is_dir()
    monkeypatch.delenv("HEARTS_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_data_dir() == tmp_path / "xdg" / "hearts-live"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_data_dir() == tmp_path / "home" / ".local" / "share" / "hearts-live"
