"""The session store: login sessions, their revocation log and attempt throttles.

``SessionStore`` is a base of ``LeagueStore`` (``server/store/league.py``), so both backends
(memory and Redis) keep the sessions beside the quick-play queue and pass one contract suite
(``tests/contract/test_sessions_contract.py``). Account rows (names, password hashes) are not
here: they live in the store of record (``server/record``). The store never sees a password or
a session token: callers (``server/accounts/service.py``) hand it SHA-256 digests of tokens.

Sessions
    Stored under the digest of the token, with the owner and an expiry on the callers' shared
    clock. ``check_session`` renews the expiry when it is used (rolling), so an active device
    stays signed in and an idle one times out. Revoking deletes the record, so the next check on
    any node refuses the token, and appends the digest to a revocation log that every node
    polls to close the sockets already open on that session.

Throttles
    ``hit`` is a sliding-window counter: it records an attempt under a key and says whether the
    attempt is within the limit, in one atomic step (two racing attempts cannot both see the
    last free slot).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

RENEW_SHARE = 0.25
"""A used session is renewed at least once per this share of its ttl (see ``renew_every``)."""

REVOCATION_LOG = 10_000
"""Revoked session digests kept for the nodes' pollers (they poll every second or so)."""


@dataclass(frozen=True, slots=True)
class Session:
    player_id: str
    expires_at: float


def renew_every(ttl: float, renew_after: float) -> float:
    """Seconds of a session's ttl that pass before a use renews it: ``renew_after``, but at most
    a quarter of the ttl, so a session used more often than every three quarters of its ttl
    never expires (a fixed hour would make any ttl up to an hour an absolute lifetime)."""
    return min(renew_after, ttl * RENEW_SHARE)


def check_finite(*values: float) -> None:
    for value in values:
        if not math.isfinite(value):
            raise ValueError(f"time must be finite, got {value!r}")


class SessionStore(ABC):
    """Sessions, their revocation log and throttles; every method is atomic on its own."""

    @abstractmethod
    async def create_session(
        self, token_digest: str, player_id: str, *, now: float, ttl: float
    ) -> None:
        """Keep a session for ``player_id`` under the token's digest until ``now + ttl``."""

    @abstractmethod
    async def check_session(
        self, token_digest: str, *, now: float, ttl: float, renew_after: float
    ) -> Session | None:
        """The live session under this digest, or None (unknown, revoked or expired).

        Rolling renewal: when more than ``renew_every(ttl, renew_after)`` seconds of its ``ttl``
        have passed, the expiry moves to ``now + ttl`` (renewing only now and then spares a
        write per check; never less often than every quarter of the ttl).
        """

    @abstractmethod
    async def revoke_session(self, token_digest: str) -> bool:
        """Delete the session; True if it existed."""

    @abstractmethod
    async def revoke_sessions(self, player_id: str) -> int:
        """Delete every session of the player; how many there were."""

    @abstractmethod
    async def revocations(self, after: str) -> tuple[str, list[str]]:
        """The digests of sessions revoked (``revoke_session``, ``revoke_sessions``) since
        position ``after`` of the revocation log, and the log's position now. ``after=""`` starts at
        the present: no digests. Nodes poll it to close the sockets of revoked sessions; the
        log keeps the latest ``REVOCATION_LOG`` entries."""

    @abstractmethod
    async def hit(self, key: str, *, now: float, window: float, limit: int) -> float:
        """Count one attempt under ``key``. Returns 0.0 if at most ``limit`` attempts (this one
        included) fall in the last ``window`` seconds; otherwise the attempt is not counted and
        the answer is how many seconds until one is allowed again."""

    @abstractmethod
    async def clear_hits(self, key: str) -> None:
        """Forget the attempts under ``key`` (a successful log-in clears its account's)."""
