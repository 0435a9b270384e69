"""The session journal in the embedded node's SQLite file: sessions by token digest
and the revocation log's latest entries, so a token issued before a restart still works and a
revoked one stays revoked (``MemoryLeagueStore(journal=...)``)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from server.store.memory.journal import RestoredSessions, SessionJournal
from server.store.sessions import REVOCATION_LOG
from server.store.sqlite.journal import JournalFile


class SqliteSessionJournal(SessionJournal):
    def __init__(self, file: JournalFile) -> None:
        self.file = file

    def restore(self) -> RestoredSessions:
        """Sessions expired by the wall clock (the callers' shared clock) are dropped."""
        with self.file.write() as db:
            db.execute("DELETE FROM sessions WHERE expires <= ?", (time.time(),))
        restored = RestoredSessions()
        for digest, player_id, expires_at in self.file.read(
            "SELECT digest, player, expires FROM sessions"
        ):
            restored.sessions[digest] = (player_id, expires_at)
        for position, digest in self.file.read("SELECT pos, digest FROM revoked ORDER BY pos"):
            restored.revoked.append(digest)
            restored.revoked_count = position
        return restored

    def put_session(self, token_digest: str, player_id: str, expires_at: float) -> None:
        with self.file.write() as db:
            db.execute(
                "INSERT OR REPLACE INTO sessions (digest, player, expires) VALUES (?, ?, ?)",
                (token_digest, player_id, expires_at),
            )

    def drop_sessions(self, token_digests: Sequence[str], logged_after: int | None) -> None:
        with self.file.write() as db:
            db.executemany(
                "DELETE FROM sessions WHERE digest = ?", [(digest,) for digest in token_digests]
            )
            if logged_after is not None and token_digests:
                db.executemany(
                    "INSERT INTO revoked (pos, digest) VALUES (?, ?)",
                    list(enumerate(token_digests, start=logged_after + 1)),
                )
                last = logged_after + len(token_digests)
                db.execute("DELETE FROM revoked WHERE pos <= ?", (last - REVOCATION_LOG,))

    def close(self) -> None:
        self.file.close()
