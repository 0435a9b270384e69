"""The in-process sessions and throttles (a part of ``MemoryLeagueStore``).

As in the rest of the memory store, no method awaits between its reads and writes, so each is
atomic under asyncio, like its Lua script in Redis. Sessions and the revocation log are written
through a journal first (``server.store.memory.journal``: nothing by default, the SQLite file
in the embedded node), and restored from it; throttles stay in memory only.
"""

from __future__ import annotations

from bisect import bisect_right

from server.store.memory.journal import SessionJournal
from server.store.sessions import (
    REVOCATION_LOG,
    Session,
    SessionStore,
    check_finite,
    renew_every,
)


class MemorySessions(SessionStore):
    """The mixin's state is made by ``_init_sessions``."""

    def _init_sessions(self, journal: SessionJournal | None = None) -> None:
        self._session_journal = journal if journal is not None else SessionJournal()
        restored = self._session_journal.restore()
        # digest -> (player id, expires at)
        self._sessions: dict[str, tuple[str, float]] = restored.sessions
        self._player_sessions: dict[str, set[str]] = {}
        for digest, (player_id, _) in self._sessions.items():
            self._player_sessions.setdefault(player_id, set()).add(digest)
        self._hits: dict[str, list[float]] = {}  # key -> attempt times, ascending
        self._revoked: list[str] = restored.revoked  # the revocation log's latest entries
        self._revoked_count = restored.revoked_count  # entries ever appended: its position

    async def create_session(
        self, token_digest: str, player_id: str, *, now: float, ttl: float
    ) -> None:
        check_finite(now, ttl)
        if not token_digest or not player_id or ttl <= 0:
            raise ValueError("a session needs a digest, a player and a positive ttl")
        self._session_journal.put_session(token_digest, player_id, now + ttl)
        self._sessions[token_digest] = (player_id, now + ttl)
        self._player_sessions.setdefault(player_id, set()).add(token_digest)

    async def check_session(
        self, token_digest: str, *, now: float, ttl: float, renew_after: float
    ) -> Session | None:
        check_finite(now, ttl, renew_after)
        held = self._sessions.get(token_digest)
        if held is None:
            return None
        player_id, expires_at = held
        if expires_at <= now:
            self._end_sessions([token_digest], revoked=False)
            return None
        if expires_at - now < ttl - renew_every(ttl, renew_after):
            expires_at = now + ttl
            self._session_journal.put_session(token_digest, player_id, expires_at)
            self._sessions[token_digest] = (player_id, expires_at)
        return Session(player_id, expires_at)

    def _end_sessions(self, digests: list[str], *, revoked: bool) -> None:
        """Drop the sessions (journaled first); revoked ones go on the revocation log."""
        if not digests:
            return
        self._session_journal.drop_sessions(digests, self._revoked_count if revoked else None)
        for digest in digests:
            player_id, _ = self._sessions.pop(digest, ("", 0.0))
            mine = self._player_sessions.get(player_id)
            if mine is not None:
                mine.discard(digest)
                if not mine:
                    del self._player_sessions[player_id]
        if revoked:
            self._revoked.extend(digests)
            self._revoked_count += len(digests)
            del self._revoked[:-REVOCATION_LOG]

    async def revoke_session(self, token_digest: str) -> bool:
        if token_digest not in self._sessions:
            return False
        self._end_sessions([token_digest], revoked=True)
        return True

    async def revocations(self, after: str) -> tuple[str, list[str]]:
        now = self._revoked_count
        if not after:
            return str(now), []
        start = max(int(after), now - len(self._revoked))
        return str(now), self._revoked[len(self._revoked) - (now - start) :] if now > start else []

    async def revoke_sessions(self, player_id: str) -> int:
        digests = sorted(self._player_sessions.get(player_id, set()))
        self._end_sessions(digests, revoked=True)
        return len(digests)

    async def hit(self, key: str, *, now: float, window: float, limit: int) -> float:
        check_finite(now, window)
        times = self._hits.setdefault(key, [])
        del times[: bisect_right(times, now - window)]
        if len(times) >= limit:
            return times[0] + window - now
        times.append(now)
        times.sort()  # a caller's clock may step back a little; keep the window exact
        return 0.0

    async def clear_hits(self, key: str) -> None:
        self._hits.pop(key, None)
