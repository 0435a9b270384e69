"""The in-process accounts, sessions and throttles (a part of ``MemoryLeagueStore``).

As in the rest of the memory store, no method awaits between its reads and writes, so each is
atomic under asyncio, like its Lua script in Redis. Sessions and the revocation log are written
through a journal first (``server.store.memory.journal``: nothing by default, the SQLite file
in the embedded node), and restored from it; throttles stay in memory only.
"""

from __future__ import annotations

from abc import abstractmethod
from bisect import bisect_right

from server.store.accounts import (
    REVOCATION_LOG,
    Account,
    AccountStore,
    Session,
    check_account,
    check_finite,
    renew_every,
)
from server.store.memory.journal import SessionJournal


class MemoryAccounts(AccountStore):
    """The mixin's state is made by ``_init_accounts``; ``_account_created`` is the league's
    hook to put a claimed guest's rating on the ladder."""

    def _init_accounts(self, journal: SessionJournal | None = None) -> None:
        self._account_values: dict[str, Account] = {}
        self._account_names: dict[str, str] = {}  # name key -> player id
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

    @abstractmethod
    def _account_created(self, player_id: str) -> None:
        """A new account: the league store lists it (on the ladder, once it has played)."""

    def is_account(self, player_id: str) -> bool:
        return player_id in self._account_values

    async def create_account(self, account: Account) -> bool:
        check_account(account)
        if account.name_key in self._account_names or account.player_id in self._account_values:
            return False
        self._account_values[account.player_id] = account
        self._account_names[account.name_key] = account.player_id
        self._account_created(account.player_id)
        return True

    async def account_by_name(self, name_key: str) -> Account | None:
        pid = self._account_names.get(name_key)
        return None if pid is None else self._account_values[pid]

    async def account(self, player_id: str) -> Account | None:
        return self._account_values.get(player_id)

    async def set_password(self, player_id: str, password_hash: str) -> int:
        old = self._account_values.get(player_id)
        if old is None:
            return -1
        if not password_hash:
            raise ValueError("a password hash must not be empty")
        self._account_values[player_id] = Account(
            old.player_id, old.name, old.name_key, password_hash, old.created_at
        )
        return self._revoke_all(player_id)

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

    def _revoke_all(self, player_id: str) -> int:
        digests = sorted(self._player_sessions.get(player_id, set()))
        self._end_sessions(digests, revoked=True)
        return len(digests)

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
        return self._revoke_all(player_id)

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
