"""Accounts, sessions and attempt throttles: the league store's identity half.

``AccountStore`` is a base of ``LeagueStore`` (``server/store/league.py``), so both backends
(memory and Redis) hold accounts beside the ratings and pass one contract suite
(``tests/contract/test_accounts_contract.py``). Being one store matters: the ladder lists accounts
only, and claiming a guest's identity as an account puts its rating on the ladder in the same atomic
step. The store never sees a password or a session token: callers (``server/accounts/service.py``)
hand it argon2id hashes and SHA-256 digests of tokens.

Accounts
    Keyed by player id (a claimed guest keeps its id, so its rating and history stay), unique
    by ``name_key`` (the name's confusable skeleton, ``server/accounts/names.py``).

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
from typing import Any

RENEW_SHARE = 0.25
"""A used session is renewed at least once per this share of its ttl (see ``renew_every``)."""

REVOCATION_LOG = 10_000
"""Revoked session digests kept for the nodes' pollers (they poll every second or so)."""


@dataclass(frozen=True, slots=True)
class Account:
    player_id: str
    name: str  # as shown
    name_key: str  # the uniqueness key: the name's confusable skeleton
    password_hash: str  # argon2id, PHC string format
    created_at: float

    def to_value(self) -> dict[str, Any]:
        return {
            "p": self.player_id,
            "n": self.name,
            "k": self.name_key,
            "h": self.password_hash,
            "c": self.created_at,
        }

    @classmethod
    def from_value(cls, v: dict[str, Any]) -> Account:
        return cls(str(v["p"]), str(v["n"]), str(v["k"]), str(v["h"]), float(v["c"]))


@dataclass(frozen=True, slots=True)
class Session:
    player_id: str
    expires_at: float


def renew_every(ttl: float, renew_after: float) -> float:
    """Seconds of a session's ttl that pass before a use renews it: ``renew_after``, but at most
    a quarter of the ttl, so a session used more often than every three quarters of its ttl
    never expires (a fixed hour would make any ttl up to an hour an absolute lifetime)."""
    return min(renew_after, ttl * RENEW_SHARE)


def check_account(account: Account) -> None:
    if not (account.player_id and account.name and account.name_key and account.password_hash):
        raise ValueError("an account needs a player id, a name, a name key and a password hash")
    check_finite(account.created_at)


def check_finite(*values: float) -> None:
    for value in values:
        if not math.isfinite(value):
            raise ValueError(f"time must be finite, got {value!r}")


class AccountStore(ABC):
    """Accounts, sessions and throttles; every method is atomic on its own."""

    @abstractmethod
    async def create_account(self, account: Account) -> bool:
        """Create the account; False, changing nothing, if its name key is taken or its player
        id already has an account. A player id that played rated games as a guest keeps them,
        and goes on the ladder at once if it has played enough."""

    @abstractmethod
    async def account_by_name(self, name_key: str) -> Account | None:
        """The account holding this name key, or None."""

    @abstractmethod
    async def account(self, player_id: str) -> Account | None:
        """The player's account, or None (a guest, or nobody)."""

    @abstractmethod
    async def set_password(self, player_id: str, password_hash: str) -> int:
        """Replace the account's password hash and revoke every one of its sessions, at once.
        Returns how many sessions were revoked; -1 if there is no such account."""

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
        """The digests of sessions revoked (log-out, revoke all, new password) since position
        ``after`` of the revocation log, and the log's position now. ``after=""`` starts at
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
